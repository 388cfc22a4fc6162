#include "rocehil/suites/pacing.hpp"

namespace rocehil::suites {

std::optional<std::string> why_rate_is_refused(const SuiteTest& test) {
  if (test.workload == "bw" || test.workload == "iperf3") return std::nullopt;
  if (test.workload == "lat" || test.workload == "calibrate_lat")
    return "a ping-pong has one message in flight; its pace is its latency";
  if (test.workload == "calibrate_bw")
    return "a calibration compares the two engines at full speed";
  // A host's ranks are sessions of their own, each step waiting on its peers: a rate per host
  // would need one pacer shared by them, which the collective executor does not have.
  return "a collective's ranks send as their steps allow, and a host's ranks share no pacer";
}

}  // namespace rocehil::suites
