#include "rocehil/harness/point_to_point.hpp"

#include <fmt/format.h>

#include "agent_conversation.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::harness {

namespace {

using Clock = AgentLink::Clock;

using conversation::check_hello;
using conversation::expect;

// Follows a run until every side in `waiting` has sent results. Silence longer than the timeout
// from a side that still owes results is an infrastructure error.
void collect_results(std::vector<std::pair<AgentLink*, SideReport*>> waiting,
                     const PointToPointConfig& config,
                     const std::function<void(const StatsEvent&)>& on_stats,
                     const std::atomic<bool>& interrupt, bool& interrupted,
                     AgentLink& client_link) {
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
        if (!done[i]) waiting[i].first->send(Request{std::nullopt, StopRequest{}});
    }
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      if (done[i]) continue;
      AgentLink& link = *waiting[i].first;
      std::optional<Reply> reply = link.receive(Clock::now() + std::chrono::milliseconds(50));
      const auto now = Clock::now();
      if (!reply) {
        const auto allowed =
            config.reply_timeout + (config.start.iterations == 0 ? run_length + config.start_delay
                                                                 : Clock::duration::zero());
        if (now - last_heard[i] > allowed)
          throw Error(
              ExitCode::infrastructure,
              fmt::format(
                  "agent on {}: silent for {} s during the run", link.name(),
                  std::chrono::duration_cast<std::chrono::seconds>(now - last_heard[i]).count()));
        continue;
      }
      last_heard[i] = now;
      if (auto* error = std::get_if<ErrorReply>(&reply->body))
        throw Error(ExitCode::infrastructure, fmt::format("agent on {} failed during the run: {}",
                                                          link.name(), error->message));
      if (auto* stats = std::get_if<StatsEvent>(&reply->body)) {
        if (&link == &client_link && on_stats) on_stats(*stats);
        continue;
      }
      if (auto* results = std::get_if<ResultsEvent>(&reply->body)) {
        waiting[i].second->results = std::move(*results);
        done[i] = true;
        --remaining;
      }
    }
  }
}

}  // namespace

DataCheck check_data(const ResultsEvent& client, const ResultsEvent& server, bool both_directions) {
  DataCheck check;
  check.checked = true;
  const auto compare = [&](const QpResult& from, const QpResult& to) {
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

PointToPointResult run_point_to_point(AgentLink& client, AgentLink& server,
                                      const PointToPointConfig& config,
                                      const std::function<void(const StatsEvent&)>& on_stats,
                                      const std::atomic<bool>& interrupt) {
  PointToPointResult result;
  result.client.name = client.name();
  result.server.name = server.name();
  const auto timeout = config.reply_timeout;
  const std::function<void(const StatsEvent&)> no_stats;

  client.send(Request{1, HelloRequest{}});
  server.send(Request{1, HelloRequest{}});
  result.client.hello = expect<HelloReply>(client, "hello", timeout, no_stats);
  result.server.hello = expect<HelloReply>(server, "hello", timeout, no_stats);
  check_hello(client, result.client.hello, config.client.provider);
  check_hello(server, result.server.hello, config.server.provider);

  client.send(Request{2, config.client});
  server.send(Request{2, config.server});
  const SetupReply client_setup = expect<SetupReply>(client, "setup", timeout, no_stats);
  const SetupReply server_setup = expect<SetupReply>(server, "setup", timeout, no_stats);

  client.send(Request{3, ConnectRequest{server_setup.endpoints}});
  server.send(Request{3, ConnectRequest{client_setup.endpoints}});
  expect<ConnectedReply>(client, "connect", timeout, no_stats);
  expect<ConnectedReply>(server, "connect", timeout, no_stats);

  StartRequest start = config.start;
  start.at_ns = wall_clock_ns() +
                std::chrono::duration_cast<std::chrono::nanoseconds>(config.start_delay).count();
  server.send(Request{4, start});
  client.send(Request{4, start});
  expect<StartedReply>(server, "start", timeout, no_stats);
  expect<StartedReply>(client, "start", timeout, no_stats);

  // Who ends by itself: the client always; the server too in lat and bidirectional runs.
  const bool lat = config.client.workload == Workload::lat;
  const bool bidirectional = config.client.bidirectional;
  std::vector<std::pair<AgentLink*, SideReport*>> waiting{{&client, &result.client}};
  if (lat || bidirectional) waiting.emplace_back(&server, &result.server);
  collect_results(waiting, config, on_stats, interrupt, result.interrupted, client);

  // The sides that serve on until told: their final counters and checksums come with the stop.
  if (!lat) {
    server.send(Request{5, StopRequest{}});
    if (bidirectional) client.send(Request{5, StopRequest{}});
    result.server.results = expect<ResultsEvent>(server, "stop", timeout, no_stats);
    if (bidirectional)
      result.client.results = expect<ResultsEvent>(client, "stop", timeout, no_stats);
  }
  result.data = check_data(result.client.results, result.server.results, lat || bidirectional);
  return result;
}

}  // namespace rocehil::harness
