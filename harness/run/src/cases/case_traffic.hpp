#pragma once

// What the phases of one case attempt share (case_attempt.cpp runs them): how a phase's failure
// is told, the agents' ends, and what a workload hands back. Point-to-point cases, with either
// engine and calibrated against each other, are in point_to_point_case.cpp.

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cases/case_attempt.hpp"
#include "rocehil/agent/protocol.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/reports/run_record.hpp"
#include "rocehil/run/nic_metrics.hpp"
#include "rocehil/run/reconciliation.hpp"
#include "rocehil/run/timeline_metrics.hpp"
#include "rocehil/suites/starvation.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run::case_traffic {

// Agents end together when a phase is over, however it ends: every input closed, then each
// waited for.
struct AgentsClosedOnExit {
  std::vector<std::unique_ptr<remote::AgentLink>>& agents;
  ~AgentsClosedOnExit() { remote::close_all(agents); }
};

// A phase that failed: the attempt records where, and the phases after it do not run.
struct PhaseFailure {
  reports::AttemptError error;
};

template <typename Fn>
auto in_phase(std::string_view phase, const std::string& host, Fn&& fn) {
  try {
    return fn();
  } catch (const PhaseFailure&) {
    throw;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    throw PhaseFailure{{host.empty() ? host_named_in(message) : host, std::string(phase), message}};
  }
}

// An event a host's device raised during the case (agent::ResultsEvent::events).
struct HostEvent {
  std::string host;
  traffic::DeviceEvent event;
};

struct TrafficOutcome {
  suites::Measured metrics;
  std::vector<HostNic> nics;      // what each host's NIC counted
  std::vector<HostEvent> events;  // what each host's devices raised, as the agents reported
  // What bent each agent's timing over the work (agent::ResultsEvent::cpu), by host; none from an
  // agent that did not say (perftest's, an older agent).
  std::vector<suites::SchedulingSeen> cpu;
  std::vector<std::string> hosts;
  std::vector<CnpsSent> cnps_sent;        // for cnp_reconciliation
  std::vector<SenderTimeline> timelines;  // bw senders' delivered bytes over time
  std::string cnps_unknown;               // why cnps_sent could not be told
  nlohmann::json raw;
  double seconds = 0;  // the measured interval
  bool interrupted = false;
  std::optional<reports::AttemptError> failure;  // measured nothing that stands, and why
};

// The CNPs one agent's notification points sent: per QP toward that QP's peer where its provider
// counts per QP, else its NIC's np_cnp_sent toward all its peers (two ranks on one NIC count it
// once). False, with why, when neither was counted.
bool add_cnps_sent(const agent::ResultsEvent& r, const std::string& host,
                   const std::vector<std::string>& qp_peers, std::vector<CnpsSent>& out,
                   std::string& why);

// Adds what `r` says bent its agent's timing on `host` (a second rank on the host is told
// apart by its rank).
void add_cpu(const agent::ResultsEvent& r, const std::string& host, std::size_t rank,
             std::vector<suites::SchedulingSeen>& out);

// A bw or lat case (engine rocehil or perftest) or a calibrate_bw / calibrate_lat case between
// the test's first two hosts.
TrafficOutcome run_point_to_point_case(const CaseContext& c);

// A workload iperf3 case (background traffic that is not RDMA) between the test's first two
// hosts (iperf3_case.cpp).
TrafficOutcome run_iperf3_case(const CaseContext& c);

}  // namespace rocehil::run::case_traffic
