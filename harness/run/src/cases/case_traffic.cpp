#include <fmt/format.h>

#include <algorithm>

#include "cases/case_traffic.hpp"
#include "rocehil/traffic/nic_counters.hpp"

namespace rocehil::run::case_traffic {

// The CNPs one agent's notification points sent: per QP toward that QP's peer where its provider
// counts per QP, else its NIC's np_cnp_sent toward all its peers (two ranks on one NIC count it
// once). False, with why, when neither was counted.
bool add_cnps_sent(const agent::ResultsEvent& r, const std::string& host,
                   const std::vector<std::string>& qp_peers, std::vector<CnpsSent>& out,
                   std::string& why) {
  const bool per_qp = std::all_of(r.per_qp.begin(), r.per_qp.end(), [](const agent::QpResult& q) {
    return q.counters.has(traffic::QpCounter::cnps_sent);
  });
  if (per_qp) {
    for (std::size_t q = 0; q < r.per_qp.size() && q < qp_peers.size(); ++q)
      out.push_back({host, {qp_peers[q]}, static_cast<double>(r.per_qp[q].counters.cnps_sent)});
    return true;
  }
  for (const traffic::NicCounterDelta& d : r.nics)
    if (const auto it = d.deltas.find("hw_counters/np_cnp_sent"); it != d.deltas.end()) {
      const auto same = std::find_if(out.begin(), out.end(), [&](const CnpsSent& s) {
        return s.host == host && s.peers.size() != 1;
      });
      CnpsSent& entry = same != out.end() ? *same : out.emplace_back(CnpsSent{host, {}, 0});
      if (same == out.end()) entry.cnps = static_cast<double>(it->second);
      for (const std::string& p : qp_peers)
        if (std::find(entry.peers.begin(), entry.peers.end(), p) == entry.peers.end())
          entry.peers.push_back(p);
      return true;
    }
  why = fmt::format(
      "{}'s provider counts no CNPs per QP and its NIC has no "
      "hw_counters/np_cnp_sent",
      host);
  return false;
}

void add_cpu(const agent::ResultsEvent& r, const std::string& host, std::size_t rank,
             std::vector<suites::SchedulingSeen>& out) {
  if (!r.cpu) return;
  const bool again = std::any_of(out.begin(), out.end(),
                                 [&](const suites::SchedulingSeen& s) { return s.who == host; });
  out.push_back({again ? fmt::format("{} rank {}", host, rank) : host, *r.cpu, false});
}

}  // namespace rocehil::run::case_traffic
