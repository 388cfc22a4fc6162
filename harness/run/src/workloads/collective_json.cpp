#include "rocehil/agent/qp_counters_json.hpp"
#include "rocehil/run/result_json.hpp"

#include <algorithm>

namespace rocehil::run {

namespace {

using nlohmann::ordered_json;

// The peer each of a rank's QPs faces: its plan's peers, qps each, in order.
// Each of a rank's QPs, in the agent's order (connection by connection, qps each): its peer,
// and whether the plan ever sends on that connection (a ring's QPs to its previous rank only
// receive: they carry nothing by design).
struct QpRole {
  int peer = -1;
  bool sends = false;
};

std::vector<QpRole> qp_roles(const traffic::CollectivePlan& plan, std::uint32_t qps, int rank) {
  std::vector<int> peers;
  plan.peers(rank, peers);
  // Which peers this rank sends to, by position in `peers`; the walk ends once all do.
  std::vector<char> sends(peers.size(), 0);
  std::size_t sending = 0;
  traffic::Step step;
  for (int s = 0; s < plan.steps(rank) && sending < peers.size(); ++s) {
    plan.step(rank, s, step);
    for (const traffic::Transfer& t : step.sends) {
      const auto at = static_cast<std::size_t>(
          std::lower_bound(peers.begin(), peers.end(), t.peer) - peers.begin());
      if (at < peers.size() && sends[at] == 0) {
        sends[at] = 1;
        ++sending;
      }
    }
  }
  std::vector<QpRole> out;
  for (std::size_t p = 0; p < peers.size(); ++p)
    for (std::uint32_t q = 0; q < qps; ++q) out.push_back({peers[p], sends[p] != 0});
  return out;
}

// A rank's waits in run.json: their sum and the longest, always; each step's only up to
// max_steps_in_detail. A ring's rank has 2 x (ranks - 1) steps, so the detail of every rank
// grows with the square of the ranks: 33 M numbers and hundreds of MB of run.json at 4,096.
void add_waits(ordered_json& rank, const agent::ResultsEvent& r) {
  if (!r.collective) return;
  const agent::CollectiveReport& c = *r.collective;
  rank["wait_ms"] = static_cast<double>(c.wait_total_ns) / 1e6;
  rank["longest_wait"] = {{"step", c.longest_wait_step},
                          {"ms", static_cast<double>(c.longest_wait_ns) / 1e6}};
  // Absent, not empty, where the agent sent no step's (or there are too many to keep).
  const std::vector<std::uint64_t>& waits = c.wait_ns;
  if (waits.empty() || waits.size() > max_steps_in_detail) return;
  std::vector<double> per_step;
  per_step.reserve(waits.size());
  for (const auto ns : waits) per_step.push_back(static_cast<double>(ns) / 1e6);
  rank["wait_ms_per_step"] = std::move(per_step);
}

}  // namespace

nlohmann::json collective_json(const std::vector<CollectiveRankInfo>& ranks,
                               const std::string& provider, const std::string& placement,
                               const std::vector<CollectiveCase>& cases) {
  ordered_json j;
  j["schema_version"] = 1;
  j["provider"] = provider;
  j["placement"] = placement;
  if (!cases.empty()) {
    const CollectiveJob& job = cases.front().job;
    j["pattern"] = std::string(to_string(job.plan.pattern));
    j["strategy"] = std::string(to_string(job.scaling.strategy));
    j["warmup_iterations"] = job.warmup_iterations;
    j["iterations"] = job.iterations;
    if (job.duration_s > 0) {
      // By duration: the iterations were chosen from one iteration's time.
      j["duration_s"] = job.duration_s;
      j["timed_iteration_s"] = cases.front().timed_iteration_s;
      j["iterations_capped"] = job.iterations == max_timed_iterations;
    }
    j["verify"] = job.verify;
    j["busbw_factor"] = traffic::busbw_factor(job.plan.pattern, job.plan.ranks);
  }
  ordered_json rank_list = ordered_json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r)
    rank_list.push_back({{"rank", r},
                         {"host", ranks[r].host},
                         {"nic", ranks[r].nic},
                         {"address", ranks[r].address}});
  j["ranks"] = std::move(rank_list);
  ordered_json case_list = ordered_json::array();
  for (const auto& c : cases) {
    const auto& s = c.summary;
    ordered_json e;
    e["bytes"] = c.job.plan.bytes;
    e["qps"] = c.job.scaling.qps;
    e["iterations"] = s.iterations;
    e["time_us"] = s.time_us;
    e["time_p50_us"] = s.time_p50_us;
    e["time_p99_us"] = s.time_p99_us;
    e["time_max_us"] = s.time_max_us;
    e["time_cv"] = s.time_cv;
    e["iteration_us"] = s.iteration_us;
    e["algbw_gbytes_s"] = s.algbw_gbytes_s;
    e["busbw_gbytes_s"] = s.busbw_gbytes_s;
    e["busbw_gbps"] = s.busbw_gbps;
    e["verified"] = c.verified;
    e["wrong"] = c.wrong;
    e["problems"] = c.problems;
    e["errors"] = c.errors;
    e["first_error"] = c.first_error;
    e["interrupted"] = c.interrupted;
    e["straggler"] = s.straggler;
    e["wait_ms"] = s.wait_ms;
    ordered_json transport = ordered_json::object();
    const traffic::QpCounters t = summed_qp_counters(c);
    for (const auto k : {traffic::QpCounter::retransmitted_packets, traffic::QpCounter::timeouts,
                         traffic::QpCounter::naks_received, traffic::QpCounter::ce_received,
                         traffic::QpCounter::cnps_handled})
      if (t.has(k)) transport[std::string(traffic::to_string(k))] = t.value(k);
    e["transport"] = std::move(transport);
    ordered_json per_rank = ordered_json::array();
    const auto plan = traffic::make_plan(c.job.plan);
    for (std::size_t r = 0; r < c.results.size(); ++r) {
      const agent::ResultsEvent& res = c.results[r];
      const std::vector<QpRole> roles = qp_roles(*plan, c.job.scaling.qps, static_cast<int>(r));
      ordered_json qps = ordered_json::array();
      for (std::size_t q = 0; q < res.per_qp.size(); ++q) {
        const agent::QpResult& qp = res.per_qp[q];
        qps.push_back({{"qpn", qp.qpn},
                       {"peer", q < roles.size() ? roles[q].peer : -1},
                       {"sends", q < roles.size() && roles[q].sends},
                       {"udp_sport", qp.udp_sport},
                       {"messages", qp.messages},
                       {"bytes", qp.bytes},
                       {"gbps", qp.gbps},
                       {"counters", agent::qp_counters_json(qp.counters)}});
        if (qp.traffic_class) qps.back()["traffic_class"] = *qp.traffic_class;  // the class it used
      }
      ordered_json rank = {{"rank", r},
                           {"bytes_sent", res.collective ? res.collective->bytes_sent : 0},
                           {"bytes_received", res.collective ? res.collective->bytes_received : 0}};
      add_waits(rank, res);
      rank["errors"] = res.errors;
      rank["first_error"] = res.first_error;
      rank["per_qp"] = std::move(qps);
      per_rank.push_back(std::move(rank));
    }
    e["per_rank"] = std::move(per_rank);
    if (c.matrix) {
      const auto& m = *c.matrix;
      ordered_json rows = ordered_json::array();
      for (int a = 0; a < m.ranks; ++a) {
        ordered_json row = ordered_json::array();
        for (int b = 0; b < m.ranks; ++b) row.push_back(m.at(a, b));
        rows.push_back(std::move(row));
      }
      ordered_json outliers = ordered_json::array();
      for (const auto& o : m.outliers)
        outliers.push_back({{"a", o.a}, {"b", o.b}, {"gbps", o.gbps}});
      e["pairwise"] = {{"gbps", std::move(rows)},
                       {"median_gbps", m.median_gbps},
                       {"outliers", std::move(outliers)},
                       {"suspects", m.suspects}};
    }
    case_list.push_back(std::move(e));
  }
  j["cases"] = std::move(case_list);
  return j;
}

}  // namespace rocehil::run
