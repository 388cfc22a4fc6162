#include "cases/qp_capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "rocehil/run/suite_check.hpp"
#include "rocehil/traffic/collective.hpp"

namespace rocehil::run::case_traffic {

namespace {

using NicKey = std::pair<std::string, std::string>;  // host, device

struct Need {
  std::uint64_t qps = 0;
  std::string how;
};

// The most peers any rank of `pattern` has over these hosts' NICs (one rank per NIC); 0 when the
// plan cannot be made (the suite check has said why).
std::uint64_t most_peers(traffic::Pattern pattern,
                         const std::vector<const inventory::Host*>& hosts) {
  int ranks = 0;
  int per_host = 1;
  for (const auto* h : hosts) {
    ranks += static_cast<int>(h->nics.size());
    per_host = std::max(per_host, static_cast<int>(h->nics.size()));
  }
  traffic::PlanOptions options;
  options.pattern = pattern;
  options.ranks = ranks;
  options.ranks_per_host = pattern == traffic::Pattern::hierarchical_allreduce ? per_host : 1;
  try {
    const auto plan = traffic::make_plan(options);
    std::size_t most = 0;
    std::vector<int> peers;
    for (int r = 0; r < ranks; ++r) {
      peers.clear();
      plan->peers(r, peers);
      most = std::max(most, peers.size());
    }
    return most;
  } catch (const std::exception&) {
    return 0;
  }
}

// What one workload (a test, or one of its parts) asks of each NIC it uses.
void add_workload(const inventory::Inventory& inventory, const suites::SuiteTest& test,
                  std::uint32_t qps, std::map<NicKey, Need>& needs) {
  const std::string_view workload = suites::measured_workload(test);
  if (workload == "iperf3") return;
  std::vector<const inventory::Host*> hosts;
  try {
    hosts = traffic_hosts(inventory, test);
  } catch (const std::exception&) {
    return;  // the suite check names a selection that matches nothing
  }
  auto add = [&](const inventory::Host& h, const inventory::Nic& n, std::uint64_t count,
                 const std::string& how) {
    Need& need = needs[{h.name, n.device}];
    need.qps += count;
    need.how += fmt::format("{}{}", need.how.empty() ? "" : " + ", how);
  };
  if (suites::is_point_to_point(test)) {
    const std::uint32_t per_side = workload == "lat" ? 1 : qps;
    for (std::size_t i = 0; i < std::min<std::size_t>(hosts.size(), 2); ++i)
      if (!hosts[i]->nics.empty())
        add(*hosts[i], hosts[i]->nics.front(), per_side,
            fmt::format("{} QPs of {}", per_side, workload));
    return;
  }
  const auto pattern = traffic::pattern_from_name(workload);
  if (!pattern) return;
  const std::uint64_t peers = most_peers(*pattern, hosts);
  for (const auto* h : hosts)
    for (const auto& n : h->nics)
      add(*h, n, peers * qps,
          fmt::format("{} peers x {} QPs per connection of {}", peers, qps, workload));
}

}  // namespace

std::vector<QpDemand> qp_demands(const inventory::Inventory& inventory, const suites::Suite& suite,
                                 const std::vector<suites::TestCase>& cases) {
  std::map<NicKey, QpDemand> largest;
  for (const suites::TestCase& tc : cases) {
    const suites::SuiteTest& test = suite.tests.at(tc.test);
    std::map<NicKey, Need> needs;
    if (test.parts.empty()) {
      add_workload(inventory, test, tc.qps, needs);
    } else {
      for (const suites::Part& p : test.parts)
        add_workload(inventory, suites::test_of_part(test, p),
                     p.settings.qps.empty() ? 1 : p.settings.qps.front(), needs);
    }
    for (auto& [key, need] : needs) {
      QpDemand& d = largest[key];
      if (need.qps <= d.qps) continue;
      d = {key.first, key.second, need.qps, tc.id, std::move(need.how)};
    }
  }
  std::vector<QpDemand> out;
  for (const auto& h : inventory.hosts)
    for (const auto& n : h.nics)
      if (const auto it = largest.find({h.name, n.device}); it != largest.end()) {
        out.push_back(it->second);
        largest.erase(it);  // a host with two NICs on one device lists it once
      }
  return out;
}

void check_qp_capacity(preflight::CheckReport& report, const std::vector<QpDemand>& demands,
                       const std::function<std::string(const std::string& host)>& provider_of) {
  for (preflight::HostCheck& host : report.hosts) {
    if (!host.facts || provider_of(host.host) != "verbs") continue;
    for (const QpDemand& d : demands) {
      if (d.host != host.host || d.device.empty()) continue;
      preflight::CheckItem item{fmt::format("qps {}", d.device), preflight::CheckStatus::ok, ""};
      const auto device =
          std::find_if(host.facts->rdma.begin(), host.facts->rdma.end(),
                       [&](const preflight::RdmaDeviceFacts& f) { return f.name == d.device; });
      if (device == host.facts->rdma.end()) continue;  // the device check has failed it already
      if (device->max_qp <= 0) {
        item.status = preflight::CheckStatus::info;
        item.detail = fmt::format(
            "case {} needs {} QPs here ({}); max_qp is not known (ibv_devinfo -v did not print "
            "it), so QP creation will tell",
            d.case_id, d.qps, d.how);
      } else if (d.qps > static_cast<std::uint64_t>(device->max_qp)) {
        item.status = preflight::CheckStatus::fail;
        item.detail = fmt::format(
            "case {} needs {} QPs here ({}), but {} holds {} (max_qp, ibv_devinfo -v): lower "
            "the test's qps",
            d.case_id, d.qps, d.how, d.device, device->max_qp);
        host.verdict = preflight::HostVerdict::failed;
      } else {
        item.detail = fmt::format("the largest case, {}, needs {} of its {} QPs (max_qp; {})",
                                  d.case_id, d.qps, device->max_qp, d.how);
      }
      host.items.push_back(std::move(item));
    }
  }
}

}  // namespace rocehil::run::case_traffic
