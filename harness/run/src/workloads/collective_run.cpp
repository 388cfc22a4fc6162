#include "rocehil/run/collective_run.hpp"

#include <cstdio>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "basics/agent_conversation.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/collective_data.hpp"

namespace rocehil::run {

namespace {

using Clock = remote::AgentLink::Clock;
using conversation::expect;

// Sends `make(r)` to every rank, then waits for each one's T: the agents work in parallel.
template <typename T, typename Make>
std::vector<T> ask_all(const std::vector<remote::AgentLink*>& links, std::string_view step,
                       std::chrono::seconds timeout, std::uint64_t id, Make make) {
  for (std::size_t r = 0; r < links.size(); ++r) links[r]->send(agent::Request{id, make(r)});
  std::vector<T> replies;
  for (remote::AgentLink* link : links) replies.push_back(expect<T>(*link, step, timeout));
  return replies;
}

// Starts every rank at one wall-clock time and follows the run until each has sent results.
// `error_grace`: how long the others run on after a rank reports a transport error (below).
std::vector<agent::ResultsEvent> run_all(
    const std::vector<remote::AgentLink*>& links, const CollectiveJob& job,
    agent::StartRequest start, std::uint64_t id,
    const std::function<void(std::uint64_t, std::uint64_t)>& on_progress,
    const std::atomic<bool>& interrupt, bool& interrupted, Clock::duration error_grace,
    std::chrono::milliseconds start_delay, const std::function<void(std::int64_t)>& on_start,
    const std::function<std::int64_t(std::int64_t)>& agree_start = {},
    std::int64_t stagger_ns = 0) {
  start.at_ns =
      wall_clock_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(start_delay).count();
  if (agree_start) start.at_ns = agree_start(start.at_ns);
  if (on_start) on_start(start.at_ns);
  ask_all<agent::StartedReply>(links, "start", job.reply_timeout, id, [&](std::size_t r) {
    agent::StartRequest mine = start;
    mine.at_ns += static_cast<std::int64_t>(r) * stagger_ns;
    return mine;
  });
  const std::size_t n = links.size();
  std::vector<std::optional<agent::ResultsEvent>> results(n);
  std::vector<Clock::time_point> last_heard(n, Clock::now());
  // Quiet ranks may wait for their start time first (an agreed one may be later than
  // start_delay, a staggered rank's later still); after it, stats arrive every stats_ms.
  const auto last_start_in = std::chrono::nanoseconds(
      start.at_ns + static_cast<std::int64_t>(n) * stagger_ns - wall_clock_ns());
  const auto allowed = job.reply_timeout + std::max<Clock::duration>(start_delay, last_start_in);
  bool stop_sent = false;
  std::optional<Clock::time_point> stop_at;  // set when the first rank reports a transport error
  const auto stop_the_rest = [&] {
    stop_sent = true;
    for (std::size_t r = 0; r < n; ++r)
      if (!results[r]) links[r]->send(agent::Request{id, agent::StopRequest{}});
  };
  for (std::size_t remaining = n; remaining > 0;) {
    if (interrupt.load() && !stop_sent) {
      interrupted = true;
      stop_the_rest();
    }
    if (stop_at && !stop_sent && Clock::now() >= *stop_at) stop_the_rest();
    for (std::size_t r = 0; r < n; ++r) {
      if (results[r]) continue;
      std::optional<agent::Reply> reply =
          links[r]->receive(Clock::now() + std::chrono::milliseconds(5));
      const auto now = Clock::now();
      if (!reply) {
        if (now - last_heard[r] > allowed)
          throw Error(
              ExitCode::infrastructure,
              fmt::format(
                  "agent on {}: silent for {} s during the collective", links[r]->name(),
                  std::chrono::duration_cast<std::chrono::seconds>(now - last_heard[r]).count()));
        continue;
      }
      last_heard[r] = now;
      if (auto* error = std::get_if<agent::ErrorReply>(&reply->body))
        throw Error(ExitCode::infrastructure,
                    fmt::format("agent on {} failed during the collective: {}", links[r]->name(),
                                error->message));
      if (auto* stats = std::get_if<agent::StatsEvent>(&reply->body)) {
        if (r == 0 && on_progress) on_progress(stats->messages, start.iterations);
        continue;
      }
      if (auto* done = std::get_if<agent::ResultsEvent>(&reply->body)) {
        if (!done->collective)
          throw Error(ExitCode::infrastructure,
                      fmt::format("agent on {} sent results without the collective's report",
                                  links[r]->name()));
        // A rank that hit a transport error has stopped: the ranks waiting for its data would
        // wait for ever, so every rank still running is told to stop and report. Not at once:
        // the ranks whose QPs lead to the same broken link or host exhaust their retries within
        // one retry window of this one, and failing_rank needs their errors to tell the broken
        // end from its peer.
        if (done->errors > 0 && !stop_at) stop_at = now + error_grace;
        results[r] = std::move(*done);
        --remaining;
      }
    }
  }
  std::vector<agent::ResultsEvent> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

void note_errors(CollectiveCase& c, const std::vector<agent::ResultsEvent>& results) {
  for (std::size_t r = 0; r < results.size(); ++r) {
    c.errors += results[r].errors;
    if (c.first_error.empty() && !results[r].first_error.empty())
      c.first_error = fmt::format("rank {} ({}): {}", r, c.rank_names[r], results[r].first_error);
  }
}

}  // namespace

std::uint64_t iterations_for(double duration_s, double iteration_s) {
  if (!(iteration_s > 0)) return 1;
  const double n = std::floor(duration_s / iteration_s);
  return static_cast<std::uint64_t>(std::clamp(n, 1.0, static_cast<double>(max_timed_iterations)));
}

std::vector<agent::PeerEndpoint> peers_for(
    const traffic::CollectivePlan& plan, int rank, std::uint32_t qps,
    const std::vector<std::vector<agent::PeerEndpoint>>& endpoints) {
  std::vector<int> mine, theirs;
  plan.peers(rank, mine);
  std::vector<agent::PeerEndpoint> out;
  for (const int p : mine) {
    plan.peers(p, theirs);
    const auto at = std::lower_bound(theirs.begin(), theirs.end(), rank);
    const auto& e = endpoints[static_cast<std::size_t>(p)];
    if (at == theirs.end() || *at != rank || e.size() != theirs.size() * qps)
      throw Error(ExitCode::infrastructure,
                  fmt::format("rank {} reported {} endpoints; its plan needs {} peers x {} qps", p,
                              e.size(), theirs.size(), qps));
    const auto first = static_cast<std::size_t>(at - theirs.begin()) * qps;
    out.insert(out.end(), e.begin() + static_cast<std::ptrdiff_t>(first),
               e.begin() + static_cast<std::ptrdiff_t>(first + qps));
  }
  return out;
}

CollectiveCase run_collective_case(
    const std::vector<remote::AgentLink*>& links, const std::vector<agent::SetupRequest>& setups,
    const CollectiveJob& job, const std::function<void(std::uint64_t, std::uint64_t)>& on_progress,
    const std::atomic<bool>& interrupt) {
  CollectiveCase c;
  c.job = job;
  const auto plan = traffic::make_plan(job.plan);
  // A rank's QPs are its peers x qps; refused here, with the pattern and the fix, rather than by
  // one agent's setup among many.
  const std::uint32_t qps = std::max<std::uint32_t>(job.scaling.qps, 1);
  if (const auto busiest = traffic::rank_with_more_peers_than(*plan, agent::max_agent_qps / qps))
    throw input_error(fmt::format(
        "{} over {} ranks: rank {} talks to {} peers x {} qps per connection = {} QPs, more than "
        "an agent takes ({} in all): lower qps to {} or less, or select fewer hosts",
        to_string(job.plan.pattern), plan->ranks(), busiest->rank, busiest->peers, qps,
        busiest->peers * qps, agent::max_agent_qps, agent::max_agent_qps / busiest->peers));
  if (links.size() != static_cast<std::size_t>(plan->ranks()) || setups.size() != links.size())
    throw input_error(fmt::format("{} agents and {} setups for {} ranks", links.size(),
                                  setups.size(), plan->ranks()));
  for (remote::AgentLink* link : links) c.rank_names.push_back(link->name());
  // One retry window of the QPs: the timeout and every retry after it.
  const Clock::duration error_grace = std::chrono::microseconds(
      std::uint64_t{setups.front().ack_timeout_us} * (setups.front().retry_count + 1u));

  const auto setup_replies =
      ask_all<agent::SetupReply>(links, "setup", job.reply_timeout, 1, [&](std::size_t r) {
        agent::SetupRequest s = setups[r];
        s.workload = agent::Workload::collective;
        s.qps = job.scaling.qps;
        s.message_bytes = static_cast<std::uint32_t>(job.plan.bytes);
        s.udp_sports = job.pinned_sports;
        s.collective = agent::CollectiveSetup{
            .pattern = std::string(to_string(job.plan.pattern)),
            .ranks = static_cast<std::uint32_t>(job.plan.ranks),
            .rank = static_cast<std::uint32_t>(r),
            .ranks_per_host = static_cast<std::uint32_t>(job.plan.ranks_per_host),
            .pipeline = static_cast<std::uint32_t>(job.plan.pipeline),
            .seed = job.plan.seed,
            .strategy = std::string(to_string(job.scaling.strategy)),
            .sport_seed = job.sport_seed};
        return s;
      });
  std::vector<std::vector<agent::PeerEndpoint>> endpoints;
  for (const auto& reply : setup_replies) endpoints.push_back(reply.endpoints);
  const auto connecting = Clock::now();
  ask_all<agent::ConnectedReply>(links, "connect", job.reply_timeout, 2, [&](std::size_t r) {
    return agent::ConnectRequest{peers_for(*plan, static_cast<int>(r), job.scaling.qps, endpoints)};
  });
  const std::chrono::milliseconds start_delay =
      start_delay_after(job.start_delay, Clock::now() - connecting);

  std::vector<agent::ResultsEvent> timed;  // by duration: one iteration per rank, timed
  if (job.verify) {
    // One iteration from the known inputs: every rank's output must have the predicted CRC.
    const agent::StartRequest once{.at_ns = 0,
                                   .seconds = 2,
                                   .iterations = 1,
                                   .warmup_seconds = 0,
                                   .warmup_iterations = 0,
                                   .stats_ms = 1000};
    const auto checked =
        run_all(links, job, once, 3, {}, interrupt, c.interrupted, error_grace, start_delay, {});
    if (job.duration_s > 0) timed = checked;
    note_errors(c, checked);
    if (c.interrupted || c.errors > 0) {
      c.results = checked;
      return c;
    }
    const auto expected = traffic::expected_output_crc32s(*plan);
    std::size_t compared = 0, unreadable = 0;
    for (std::size_t r = 0; r < checked.size(); ++r) {
      const auto& expect_crc = expected[r];
      const auto& got = checked[r].collective->output_crc32;
      if (!expect_crc) continue;  // no single right answer (incast's receiver)
      if (!got) {
        ++unreadable;  // GPU memory: the agent cannot read it
        continue;
      }
      ++compared;
      if (*got != *expect_crc) {
        ++c.wrong;
        c.problems.push_back(fmt::format("rank {} ({}): output CRC-32 {:#010x}, expected {:#010x}",
                                         r, c.rank_names[r], *got, *expect_crc));
      }
    }
    c.verified = compared > 0 && unreadable == 0;
  }

  if (job.duration_s > 0) {
    // One iteration's time chooses the measured run's iterations: the verified one's when it
    // ran, else one run for it.
    if (timed.empty()) {
      const agent::StartRequest once{.at_ns = 0,
                                     .seconds = 2,
                                     .iterations = 1,
                                     .warmup_seconds = 0,
                                     .warmup_iterations = 0,
                                     .stats_ms = 1000};
      timed =
          run_all(links, job, once, 3, {}, interrupt, c.interrupted, error_grace, start_delay, {});
      note_errors(c, timed);
      if (c.interrupted || c.errors > 0) {
        c.results = timed;
        return c;
      }
    }
    for (const auto& r : timed)
      if (r.collective && r.collective->iteration_end_ns.size() == 1)
        c.timed_iteration_s = std::max(
            c.timed_iteration_s,
            static_cast<double>(r.collective->iteration_end_ns[0] - r.collective->start_ns) / 1e9);
    c.job.iterations = iterations_for(job.duration_s, c.timed_iteration_s);
  }
  const agent::StartRequest measured{.at_ns = 0,
                                     .seconds = 2,
                                     .iterations = c.job.iterations,
                                     .warmup_seconds = 0,
                                     .warmup_iterations = job.warmup_iterations,
                                     .stats_ms = 1000};
  c.results = run_all(links, job, measured, 4, on_progress, interrupt, c.interrupted, error_grace,
                      start_delay, job.on_measured_start, job.agree_start, job.stagger_ns);
  note_errors(c, c.results);
  std::vector<traffic::RankTiming> timings;
  for (const auto& r : c.results)
    timings.push_back({.start_ns = r.collective->start_ns,
                       .iteration_end_ns = r.collective->iteration_end_ns,
                       .wait_ns = r.collective->wait_ns,
                       .step_ns = r.collective->step_ns,
                       .wait_total_ns = r.collective->wait_total_ns});
  c.summary = traffic::summarize_collective(*plan, timings);
  if (job.plan.pattern == traffic::Pattern::pairwise)
    c.matrix = traffic::pairwise_matrix(*plan, timings, c.summary.iterations, 0.2);
  return c;
}

std::chrono::milliseconds start_delay_after(std::chrono::milliseconds configured,
                                            std::chrono::steady_clock::duration connect_round) {
  return std::max(configured,
                  std::chrono::duration_cast<std::chrono::milliseconds>(2 * connect_round));
}

int failing_peer(const CollectiveCase& c, std::size_t rank) {
  if (rank >= c.results.size() || c.results.size() != static_cast<std::size_t>(c.job.plan.ranks))
    return -1;
  const agent::ResultsEvent& e = c.results[rank];
  // "QP 0x1a2b: retry_exceeded": the failing QP, whose index gives the peer it talks to.
  unsigned long qpn = 0;
  if (std::sscanf(e.first_error.c_str(), "QP %lx", &qpn) != 1) return -1;
  const auto plan = traffic::make_plan(c.job.plan);
  std::vector<int> peers;
  plan->peers(static_cast<int>(rank), peers);
  const std::uint32_t qps = std::max<std::uint32_t>(c.job.scaling.qps, 1);
  for (std::size_t q = 0; q < e.per_qp.size(); ++q)
    if (e.per_qp[q].qpn == qpn && q / qps < peers.size()) return peers[q / qps];
  return -1;
}

int failing_rank(const CollectiveCase& c) {
  if (c.errors == 0 || c.results.size() != static_cast<std::size_t>(c.job.plan.ranks)) return -1;
  std::vector<int> votes(c.results.size(), 0), as_peer(c.results.size(), 0);
  for (std::size_t r = 0; r < c.results.size(); ++r) {
    if (c.results[r].errors == 0) continue;
    ++votes[r];
    if (const int peer = failing_peer(c, r); peer >= 0) {
      ++votes[static_cast<std::size_t>(peer)];
      ++as_peer[static_cast<std::size_t>(peer)];
    }
  }
  // A NIC that lost its carrier during the case is the broken end, whoever reported the error:
  // with one rank's error in, its vote and its peer's tie, and only the link can tell them apart.
  for (std::size_t r = 0; r < c.results.size(); ++r)
    for (const traffic::NicCounterDelta& nic : c.results[r].nics)
      if (const auto it = nic.deltas.find("netdev/carrier_down_count");
          it != nic.deltas.end() && it->second > 0)
        votes[r] += static_cast<int>(c.results.size()) * 2;
  // So is one whose device said its port went down (ibv_get_async_event, or a soft NIC's carrier).
  for (std::size_t r = 0; r < c.results.size(); ++r)
    for (const traffic::DeviceEvent& e : c.results[r].events)
      if (e.kind == "port_error" || e.kind == "device_fatal")
        votes[r] += static_cast<int>(c.results.size()) * 2;
  int best = -1;
  for (std::size_t r = 0; r < votes.size(); ++r)
    if (votes[r] > 0 && (best < 0 || votes[r] > votes[static_cast<std::size_t>(best)] ||
                         (votes[r] == votes[static_cast<std::size_t>(best)] &&
                          as_peer[r] > as_peer[static_cast<std::size_t>(best)])))
      best = static_cast<int>(r);
  return best;
}

traffic::QpCounters summed_qp_counters(const CollectiveCase& c) {
  traffic::QpCounters t;
  for (const auto& r : c.results)
    for (const auto& q : r.per_qp) t += q.counters;
  return t;
}

}  // namespace rocehil::run
