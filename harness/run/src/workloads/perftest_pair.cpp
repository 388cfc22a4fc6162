#include "rocehil/run/perftest_pair.hpp"

#include <fmt/format.h>

#include "basics/agent_conversation.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

using Clock = remote::AgentLink::Clock;
using namespace std::chrono_literals;
using conversation::check_protocol;
using conversation::expect;

// How long a side may take: what its agent allows perftest, and the reply timeout on top for the
// agent to report.
Clock::duration allowed(const agent::PerftestRequest& r, std::chrono::seconds reply_timeout) {
  return std::chrono::duration_cast<Clock::duration>(
             std::chrono::duration<double>(agent::perftest_time_limit_s(r))) +
         reply_timeout;
}

// The next message from `link` within `deadline` that is a perftest reply; an error reply is
// the agent refusing the request.
std::optional<agent::Reply> next(remote::AgentLink& link, Clock::time_point deadline) {
  std::optional<agent::Reply> reply = link.receive(deadline);
  if (reply)
    if (auto* error = std::get_if<agent::ErrorReply>(&reply->body))
      throw input_error(
          fmt::format("agent on {} refused perftest: {}", link.name(), error->message));
  return reply;
}

}  // namespace

PerftestPairResult run_perftest_pair(remote::AgentLink& client, remote::AgentLink& server,
                                     const PerftestPairConfig& config,
                                     const std::function<void(double seconds)>& on_running,
                                     const std::atomic<bool>& interrupt) {
  PerftestPairResult result;
  result.client.name = client.name();
  result.server.name = server.name();
  const auto timeout = config.reply_timeout;

  client.send(agent::Request{1, agent::HelloRequest{}});
  server.send(agent::Request{1, agent::HelloRequest{}});
  result.client.hello = expect<agent::HelloReply>(client, "hello", timeout);
  result.server.hello = expect<agent::HelloReply>(server, "hello", timeout);
  check_protocol(client, result.client.hello);
  check_protocol(server, result.server.hello);

  // The server side first: its port, or its results when perftest failed before listening.
  // Replies are awaited in short slices so that a Ctrl-C is seen at once.
  server.send(agent::Request{2, config.server});
  std::uint16_t port = 0;
  auto deadline = Clock::now() + timeout;
  while (!result.server.results && (port == 0 || result.interrupted)) {
    if (interrupt.load() && !result.interrupted) {
      result.interrupted = true;
      server.send(agent::Request{3, agent::StopRequest{}});
      deadline = Clock::now() + timeout;  // for the stopped server's results
    }
    std::optional<agent::Reply> reply = next(server, Clock::now() + 50ms);
    if (!reply) {
      if (Clock::now() > deadline)
        throw Error(ExitCode::infrastructure,
                    fmt::format("agent on {}: perftest {} within {} s", server.name(),
                                result.interrupted ? "did not end after a stop" : "did not listen",
                                timeout.count()));
      continue;
    }
    if (auto* listening = std::get_if<agent::PerftestListeningReply>(&reply->body))
      port = listening->tcp_port;
    else if (auto* results = std::get_if<agent::PerftestResultsEvent>(&reply->body))
      result.server.results = std::move(*results);
  }
  // The client has nothing to connect to, or was not to start.
  if (result.server.results) return result;

  agent::PerftestRequest client_request = config.client;
  client_request.tcp_port = port;
  client.send(agent::Request{2, client_request});
  const auto started = Clock::now();
  const auto client_deadline = started + allowed(client_request, timeout);
  bool stop_sent = false;
  std::optional<Clock::time_point> server_deadline;
  while (!result.client.results || !result.server.results) {
    if (interrupt.load() && !stop_sent) {
      result.interrupted = stop_sent = true;
      if (!result.client.results) client.send(agent::Request{3, agent::StopRequest{}});
      if (!result.server.results) server.send(agent::Request{3, agent::StopRequest{}});
    }
    for (auto* side : {&result.client, &result.server}) {
      if (side->results) continue;
      remote::AgentLink& link = side == &result.client ? client : server;
      std::optional<agent::Reply> reply = next(link, Clock::now() + 50ms);
      if (reply)
        if (auto* results = std::get_if<agent::PerftestResultsEvent>(&reply->body))
          side->results = std::move(*results);
    }
    const auto now = Clock::now();
    if (on_running) on_running(std::chrono::duration<double>(now - started).count());
    if (!result.client.results && now > client_deadline)
      throw Error(
          ExitCode::infrastructure,
          fmt::format("agent on {}: no perftest results {} s after the start", client.name(),
                      std::chrono::duration_cast<std::chrono::seconds>(now - started).count()));
    // Once the client is done the server ends by itself; one whose client never reached it
    // (a failed connect) waits for ever, so it is told to stop.
    if (result.client.results && !result.server.results) {
      if (!server_deadline)
        server_deadline = now + (result.client.results->error.empty() ? timeout : 0s);
      if (now > *server_deadline && !stop_sent) {
        server.send(agent::Request{3, agent::StopRequest{}});
        stop_sent = true;
        server_deadline = now + timeout;
      } else if (now > *server_deadline) {
        throw Error(ExitCode::infrastructure,
                    fmt::format("agent on {}: perftest did not end after a stop", server.name()));
      }
    }
  }
  return result;
}

std::optional<PerftestFailure> perftest_failure(const PerftestPairResult& r) {
  if (r.interrupted)
    return PerftestFailure{r.client.name, "stopped by a signal (Ctrl-C) before perftest finished"};
  const auto failed = [](const PerftestSide& side) -> std::optional<PerftestFailure> {
    if (!side.results || side.results->error.empty()) return std::nullopt;
    return PerftestFailure{
        side.name,
        fmt::format("{} on {}: {}",
                    side.results->command.empty() ? "perftest" : side.results->command.front(),
                    side.name, side.results->error)};
  };
  // The server's own failure explains the client's ("Couldn't connect"), not the other way round;
  // but a server stopped because its client failed is the client's story.
  if (r.server.results && !r.server.results->stopped)
    if (auto f = failed(r.server)) return f;
  if (auto f = failed(r.client)) return f;
  if (!r.client.results)
    return PerftestFailure{r.client.name, fmt::format("perftest on {} never started: its server "
                                                      "side on {} did not come up",
                                                      r.client.name, r.server.name)};
  if (!r.client.results->report)
    return PerftestFailure{r.client.name,
                           fmt::format("perftest on {} printed no result", r.client.name)};
  return std::nullopt;
}

suites::Measured perftest_metrics(const PerftestPairResult& r) {
  suites::Measured m;
  constexpr std::string_view no_qp_counters =
      "the perftest engine reports no per-QP counters; use the NICs' own counters (nic_*)";
  for (const char* key : {"retransmits", "timeouts", "naks", "cnps"})
    m.absent(key, std::string(no_qp_counters));
  m.absent("data_errors", "perftest does not check the data it moves (engine rocehil does)");
  const agent::PerftestResultsEvent* client = r.client.results ? &*r.client.results : nullptr;
  const perftest::Report* report = client && client->report ? &*client->report : nullptr;
  const auto failure = perftest_failure(r);
  const std::string why = failure ? failure->message : std::string("perftest did not run");
  if (report && report->bw) {
    const perftest::BwRow& bw = *report->bw;
    m.values["busbw_gbps"] = bw.average_gbps;
    m.values["algbw_gbps"] = bw.average_gbps;
    if (bw.peak_gbps)
      m.values["perftest_bw_peak_gbps"] = *bw.peak_gbps;
    else
      m.absent("perftest_bw_peak_gbps",
               "perftest did not measure the BW peak in this run (\"BW peak won't be measured\": "
               "a run by duration, a receiving server side or more than 20000 iterations); use "
               "perftest_bw_average_gbps");
    m.values["perftest_bw_average_gbps"] = bw.average_gbps;
    m.values["perftest_msg_rate_mpps"] = bw.msg_rate_mpps;
  } else if (report && report->lat) {
    const perftest::LatRow& lat = *report->lat;
    const auto set = [&](const char* key, const std::optional<double>& v, const char* absent_why) {
      if (v)
        m.values[key] = *v;
      else
        m.absent(key, absent_why);
    };
    constexpr const char* duration_run =
        "perftest prints only t_avg and tps for a run by duration; give iterations";
    set("lat_p50_us", lat.typical_us, duration_run);
    set("lat_p99_us", lat.p99_us, duration_run);
    set("lat_max_us", lat.max_us, duration_run);
    set("perftest_t_min_us", lat.min_us, duration_run);
    set("perftest_t_max_us", lat.max_us, duration_run);
    set("perftest_t_typical_us", lat.typical_us, duration_run);
    set("perftest_t_avg_us", lat.avg_us, "perftest printed no t_avg");
    set("lat_avg_us", lat.avg_us, "perftest printed no t_avg");
    set("perftest_t_stdev_us", lat.stdev_us, duration_run);
    set("perftest_t_p99_us", lat.p99_us, duration_run);
    set("perftest_t_p999_us", lat.p999_us, duration_run);
  } else {
    for (const char* key :
         {"busbw_gbps", "algbw_gbps", "lat_p50_us", "lat_p99_us", "lat_max_us", "lat_avg_us"})
      m.absent(key, "perftest gave no result: " + why);
  }
  if (report) m.values["errors"] = 0;  // perftest reports numbers only for a run that completed
  return m;
}

}  // namespace rocehil::run
