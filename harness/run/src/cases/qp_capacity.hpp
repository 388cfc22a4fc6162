#pragma once

// Whether each verbs NIC holds the QPs the run's cases ask of it: a test may ask 16,384 QPs per
// connection, a collective rank has one connection per peer, and parts add up on a NIC. What a
// case needs of each NIC is worked out here from the suite and the inventory; what the device
// holds is the preflight's `ibv_devinfo -v` (max_qp). A NIC that cannot hold the largest case
// fails the preflight, before any agent starts, instead of ENOMEM half way through QP creation.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/preflight/preflight.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run::case_traffic {

// The most QPs one NIC (host, RDMA device) is asked for in one case of the run, and by which.
struct QpDemand {
  std::string host;
  std::string device;  // the inventory NIC's RDMA device; empty for a NIC without one
  std::uint64_t qps = 0;
  std::string case_id;
  std::string how;  // "2 peers x 4096 QPs per connection", summed over parts with " + "
};

// One entry per NIC that any case uses, in inventory order, each with its largest case. iperf3
// parts ask for none; bw and lat ask `qps` on each of the pair's first NICs; a collective rank
// asks its most-connected rank's peers x `qps` (ranks are symmetric but for incast's root, so
// the most is what every NIC must be ready for, whatever the placement).
std::vector<QpDemand> qp_demands(const inventory::Inventory& inventory, const suites::Suite& suite,
                                 const std::vector<suites::TestCase>& cases);

// Adds a "qps DEVICE" item to each preflighted host that runs verbs (`provider_of` says a host's
// provider in this run): ok with what the largest case needs of max_qp, fail when it needs more
// (the host's verdict becomes failed), info when the device's max_qp is not known.
void check_qp_capacity(preflight::CheckReport& report, const std::vector<QpDemand>& demands,
                       const std::function<std::string(const std::string& host)>& provider_of);

}  // namespace rocehil::run::case_traffic
