#include "rocehil/run/point_to_point.hpp"

#include <fmt/format.h>

#include "basics/agent_conversation.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

using Clock = remote::AgentLink::Clock;

using conversation::check_hello;
using conversation::expect;

// Follows a run until every side in `waiting` has sent results. Silence longer than the timeout
// from a side that still owes results is an infrastructure error.
void collect_results(std::vector<std::pair<remote::AgentLink*, SideReport*>> waiting,
                     const PointToPointConfig& config, Clock::duration until_start,
                     const std::function<void(const agent::StatsEvent&)>& on_stats,
                     const std::atomic<bool>& interrupt, bool& interrupted,
                     remote::AgentLink& client_link) {
  std::vector<Clock::time_point> last_heard(waiting.size(), Clock::now());
  // A side that only owes results at the end (it sends no stats) may be quiet for the whole run.
  const auto run_length = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(config.start.seconds + config.start.warmup_seconds));
  std::vector<bool> done(waiting.size(), false);
  bool stop_sent = false;
  for (std::size_t remaining = waiting.size(); remaining > 0;) {
    if (interrupt.load() && !stop_sent) {
      interrupted = stop_sent = true;
      for (std::size_t i = 0; i < waiting.size(); ++i)
        if (!done[i]) waiting[i].first->send(agent::Request{std::nullopt, agent::StopRequest{}});
    }
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      if (done[i]) continue;
      remote::AgentLink& link = *waiting[i].first;
      std::optional<agent::Reply> reply =
          link.receive(Clock::now() + std::chrono::milliseconds(50));
      const auto now = Clock::now();
      if (!reply) {
        // Before an agreed start later than start_delay (a part's), both sides are quiet too.
        // A run by volume has no planned length: a long transfer is alive while its stats
        // events (every stats_ms, from both sides) keep coming, so only their silence counts.
        const bool by_time = config.start.iterations == 0 && config.start.messages_per_qp == 0;
        const auto allowed =
            config.reply_timeout + until_start +
            (by_time ? run_length + config.start_delay
                     : (config.start.messages_per_qp != 0 ? config.start_delay
                                                          : Clock::duration::zero()));
        if (now - last_heard[i] > allowed)
          throw Error(
              ExitCode::infrastructure,
              fmt::format(
                  "agent on {}: silent for {} s during the run", link.name(),
                  std::chrono::duration_cast<std::chrono::seconds>(now - last_heard[i]).count()));
        continue;
      }
      last_heard[i] = now;
      if (auto* error = std::get_if<agent::ErrorReply>(&reply->body))
        throw Error(ExitCode::infrastructure, fmt::format("agent on {} failed during the run: {}",
                                                          link.name(), error->message));
      if (auto* stats = std::get_if<agent::StatsEvent>(&reply->body)) {
        if (&link == &client_link && on_stats) on_stats(*stats);
        continue;
      }
      if (auto* results = std::get_if<agent::ResultsEvent>(&reply->body)) {
        waiting[i].second->results = std::move(*results);
        done[i] = true;
        --remaining;
      }
    }
  }
}

}  // namespace

DataCheck check_data(const agent::ResultsEvent& client, const agent::ResultsEvent& server,
                     bool both_directions) {
  DataCheck check;
  check.checked = true;
  const auto compare = [&](const agent::QpResult& from, const agent::QpResult& to) {
    if (!from.source_crc32 || !to.target_crc32) {
      check.checked = false;
      return;
    }
    ++check.transfers;
    if (*from.source_crc32 == *to.target_crc32) {
      ++check.intact;
      return;
    }
    check.problems.push_back(fmt::format(
        "QP {:#x} -> QP {:#x}: the bytes sent have CRC-32 {:#010x} but {:#010x} arrived", from.qpn,
        to.qpn, *from.source_crc32, *to.target_crc32));
  };
  if (client.per_qp.size() != server.per_qp.size()) {
    check.problems.push_back(fmt::format("the client reported {} QPs and the server {}",
                                         client.per_qp.size(), server.per_qp.size()));
    return check;
  }
  for (std::size_t i = 0; i < client.per_qp.size(); ++i) {
    compare(client.per_qp[i], server.per_qp[i]);
    if (both_directions) compare(server.per_qp[i], client.per_qp[i]);
  }
  return check;
}

PointToPointResult run_point_to_point(remote::AgentLink& client, remote::AgentLink& server,
                                      const PointToPointConfig& config,
                                      const std::function<void(const agent::StatsEvent&)>& on_stats,
                                      const std::atomic<bool>& interrupt) {
  PointToPointResult result;
  result.client.name = client.name();
  result.server.name = server.name();
  const auto timeout = config.reply_timeout;
  const std::function<void(const agent::StatsEvent&)> no_stats;

  client.send(agent::Request{1, agent::HelloRequest{}});
  server.send(agent::Request{1, agent::HelloRequest{}});
  result.client.hello = expect<agent::HelloReply>(client, "hello", timeout, no_stats);
  result.server.hello = expect<agent::HelloReply>(server, "hello", timeout, no_stats);
  check_hello(client, result.client.hello, config.client.provider);
  check_hello(server, result.server.hello, config.server.provider);

  client.send(agent::Request{2, config.client});
  server.send(agent::Request{2, config.server});
  const agent::SetupReply client_setup =
      expect<agent::SetupReply>(client, "setup", timeout, no_stats);
  const agent::SetupReply server_setup =
      expect<agent::SetupReply>(server, "setup", timeout, no_stats);

  client.send(agent::Request{3, agent::ConnectRequest{server_setup.endpoints}});
  server.send(agent::Request{3, agent::ConnectRequest{client_setup.endpoints}});
  expect<agent::ConnectedReply>(client, "connect", timeout, no_stats);
  expect<agent::ConnectedReply>(server, "connect", timeout, no_stats);

  agent::StartRequest start = config.start;
  start.at_ns = wall_clock_ns() +
                std::chrono::duration_cast<std::chrono::nanoseconds>(config.start_delay).count();
  if (config.agree_start) start.at_ns = config.agree_start(start.at_ns);
  if (config.on_start) config.on_start(start.at_ns);
  server.send(agent::Request{4, start});
  client.send(agent::Request{4, start});
  expect<agent::StartedReply>(server, "start", timeout, no_stats);
  expect<agent::StartedReply>(client, "start", timeout, no_stats);

  // Who ends by itself: the client always; the server too in lat and bidirectional runs.
  const bool lat = config.client.workload == agent::Workload::lat;
  const bool bidirectional = config.client.bidirectional;
  std::vector<std::pair<remote::AgentLink*, SideReport*>> waiting{{&client, &result.client}};
  if (lat || bidirectional) waiting.emplace_back(&server, &result.server);
  const auto until_start = std::max<Clock::duration>(
      Clock::duration::zero(), std::chrono::nanoseconds(start.at_ns - wall_clock_ns()));
  collect_results(waiting, config, until_start, on_stats, interrupt, result.interrupted, client);

  // The sides that serve on until told: their final counters and checksums come with the stop.
  if (!lat) {
    server.send(agent::Request{5, agent::StopRequest{}});
    if (bidirectional) client.send(agent::Request{5, agent::StopRequest{}});
    result.server.results = expect<agent::ResultsEvent>(server, "stop", timeout, no_stats);
    if (bidirectional)
      result.client.results = expect<agent::ResultsEvent>(client, "stop", timeout, no_stats);
  }
  result.data = check_data(result.client.results, result.server.results, lat || bidirectional);
  return result;
}

}  // namespace rocehil::run
