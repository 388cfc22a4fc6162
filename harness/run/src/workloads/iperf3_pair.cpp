#include "rocehil/run/iperf3_pair.hpp"

#include <fmt/format.h>

#include "basics/agent_conversation.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

using namespace std::chrono_literals;

// Request ids on the pair's links: hello, the iperf3 request, a stop.
constexpr std::uint64_t hello_id = 1, iperf3_id = 2, stop_id = 3;

}  // namespace

Iperf3Pair::Iperf3Pair(remote::AgentLink& client, remote::AgentLink& server,
                       Iperf3PairConfig config)
    : client_(client), server_(server), config_(std::move(config)) {
  result_.client.name = client.name();
  result_.server.name = server.name();
}

// An error reply is the agent refusing the request.
std::optional<agent::Reply> Iperf3Pair::next(remote::AgentLink& link, Clock::time_point deadline) {
  std::optional<agent::Reply> reply = link.receive(deadline);
  if (reply)
    if (auto* error = std::get_if<agent::ErrorReply>(&reply->body))
      throw input_error(fmt::format("agent on {} refused iperf3: {}", link.name(), error->message));
  return reply;
}

void Iperf3Pair::start(const std::atomic<bool>& interrupt) {
  const auto timeout = config_.reply_timeout;
  client_.send(agent::Request{hello_id, agent::HelloRequest{}});
  server_.send(agent::Request{hello_id, agent::HelloRequest{}});
  result_.client.hello = conversation::expect<agent::HelloReply>(client_, "hello", timeout);
  result_.server.hello = conversation::expect<agent::HelloReply>(server_, "hello", timeout);
  conversation::check_protocol(client_, result_.client.hello);
  conversation::check_protocol(server_, result_.server.hello);

  // The server side first: its port, or its results when iperf3 failed before listening.
  // Replies are awaited in short slices so that a Ctrl-C is seen at once.
  server_.send(agent::Request{iperf3_id, config_.server});
  std::uint16_t port = 0;
  auto deadline = Clock::now() + timeout;
  while (!result_.server.results && (port == 0 || result_.interrupted)) {
    if (interrupt.load() && !result_.interrupted) {
      result_.interrupted = true;
      server_.send(agent::Request{stop_id, agent::StopRequest{}});
      deadline = Clock::now() + timeout;  // for the stopped server's results
    }
    std::optional<agent::Reply> reply = next(server_, Clock::now() + 50ms);
    if (!reply) {
      if (Clock::now() > deadline)
        throw Error(ExitCode::infrastructure,
                    fmt::format("agent on {}: iperf3 {} within {} s", server_.name(),
                                result_.interrupted ? "did not end after a stop" : "did not listen",
                                timeout.count()));
      continue;
    }
    if (auto* listening = std::get_if<agent::Iperf3ListeningReply>(&reply->body))
      port = listening->port;
    else if (auto* results = std::get_if<agent::Iperf3ResultsEvent>(&reply->body))
      result_.server.results = std::move(*results);
  }
  if (result_.server.results) return;  // the client has nothing to send to

  config_.client.port = port;
  if (config_.client.at_ns == 0 && config_.start_after.count() > 0)
    config_.client.at_ns =
        wall_clock_ns() +
        std::chrono::duration_cast<std::chrono::nanoseconds>(config_.start_after).count();
  if (config_.agree_start) config_.client.at_ns = config_.agree_start(config_.client.at_ns);
  client_.send(agent::Request{iperf3_id, config_.client});
  client_started_ = Clock::now();
  // The client waits for its at_ns before iperf3 starts, then iperf3 has its time limit.
  const double wait_s =
      std::max<double>(0, static_cast<double>(config_.client.at_ns - wall_clock_ns()) / 1e9);
  client_deadline_ = *client_started_ +
                     std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                         wait_s + agent::iperf3_time_limit_s(config_.client))) +
                     timeout;
}

bool Iperf3Pair::done() const {
  return result_.server.results && (result_.client.results || !client_started_);
}

double Iperf3Pair::seconds_running() const {
  return client_started_ ? std::chrono::duration<double>(Clock::now() - *client_started_).count()
                         : 0;
}

void Iperf3Pair::stop() {
  if (stop_sent_) return;
  stop_sent_ = true;
  result_.interrupted = true;
  if (client_started_ && !result_.client.results)
    client_.send(agent::Request{stop_id, agent::StopRequest{}});
  if (!result_.server.results) server_.send(agent::Request{stop_id, agent::StopRequest{}});
}

bool Iperf3Pair::poll(std::chrono::milliseconds slice) {
  if (done()) return true;
  const auto timeout = config_.reply_timeout;
  for (auto* side : {&result_.client, &result_.server}) {
    if (side->results) continue;
    remote::AgentLink& link = side == &result_.client ? client_ : server_;
    std::optional<agent::Reply> reply = next(link, Clock::now() + slice / 2);
    if (reply)
      if (auto* results = std::get_if<agent::Iperf3ResultsEvent>(&reply->body))
        side->results = std::move(*results);
  }
  const auto now = Clock::now();
  if (!result_.client.results && now > client_deadline_)
    throw Error(ExitCode::infrastructure,
                fmt::format("agent on {}: no iperf3 results {:.0f} s after the start",
                            client_.name(), seconds_running()));
  // Once the client is done the one-off server ends by itself; one whose client never reached
  // it (a failed connect) waits for ever, so it is told to stop.
  if (result_.client.results && !result_.server.results) {
    if (!server_deadline_)
      server_deadline_ = now + (result_.client.results->error.empty() ? timeout : 0s);
    if (now > *server_deadline_ && !stop_sent_) {
      server_.send(agent::Request{stop_id, agent::StopRequest{}});
      stop_sent_ = true;
      server_deadline_ = now + timeout;
    } else if (now > *server_deadline_) {
      throw Error(ExitCode::infrastructure,
                  fmt::format("agent on {}: iperf3 did not end after a stop", server_.name()));
    }
  }
  return done();
}

Iperf3PairResult run_iperf3_pair(remote::AgentLink& client, remote::AgentLink& server,
                                 const Iperf3PairConfig& config,
                                 const std::function<void(double seconds)>& on_running,
                                 const std::atomic<bool>& interrupt) {
  Iperf3Pair pair(client, server, config);
  pair.start(interrupt);
  while (!pair.poll(50ms)) {
    if (interrupt.load()) pair.stop();
    if (on_running) on_running(pair.seconds_running());
  }
  return pair.result();
}

std::optional<Iperf3Failure> iperf3_failure(const Iperf3PairResult& r) {
  if (r.interrupted)
    return Iperf3Failure{r.client.name, "stopped by a signal (Ctrl-C) before iperf3 finished"};
  const auto failed = [](const Iperf3Side& side) -> std::optional<Iperf3Failure> {
    if (!side.results || side.results->error.empty()) return std::nullopt;
    return Iperf3Failure{side.name,
                         fmt::format("iperf3 on {}: {}", side.name, side.results->error)};
  };
  // The server's own failure explains the client's, not the other way round; but a server
  // stopped because its client failed is the client's story.
  if (r.server.results && !r.server.results->stopped)
    if (auto f = failed(r.server)) return f;
  if (auto f = failed(r.client)) return f;
  if (!r.client.results)
    return Iperf3Failure{r.client.name,
                         fmt::format("iperf3 on {} never started: its server side on {} did not "
                                     "come up",
                                     r.client.name, r.server.name)};
  return std::nullopt;
}

suites::Measured iperf3_metrics(const Iperf3PairResult& r) {
  suites::Measured m;
  const auto report_of = [](const Iperf3Side& s) -> const iperf::Report* {
    return s.results && s.results->report && s.results->error.empty() ? &*s.results->report
                                                                      : nullptr;
  };
  const iperf::Report* server = report_of(r.server);
  const iperf::Report* client = report_of(r.client);
  const auto failure = iperf3_failure(r);
  const std::string why = failure ? "iperf3 gave no result: " + failure->message : "";
  // The receiver's own numbers; the client's document carries a copy sent back by the server.
  const iperf::Sum* received = server && server->received   ? &*server->received
                               : client && client->received ? &*client->received
                                                            : nullptr;
  const iperf::Report* any = server ? server : client;
  const bool udp = any != nullptr && any->protocol == "UDP";
  if (failure || received == nullptr) {
    const std::string reason = failure ? why : "iperf3 reported no receiver totals (sum_received)";
    for (const char* key : {"iperf_gbps", "iperf_loss_ratio", "iperf_retransmits"})
      m.absent(key, reason);
    return m;
  }
  m.values["iperf_gbps"] = received->bits_per_second / 1e9;
  if (udp) {
    m.absent("iperf_retransmits", "UDP retransmits nothing; see iperf_loss_ratio");
    if (received->packets && *received->packets > 0 && received->lost_packets)
      m.values["iperf_loss_ratio"] =
          static_cast<double>(*received->lost_packets) / static_cast<double>(*received->packets);
    else
      m.absent("iperf_loss_ratio", "the receiver counted no datagrams (sum_received.packets)");
  } else {
    m.absent("iperf_loss_ratio", "TCP resends what it loses; see iperf_retransmits");
    if (client && client->sent && client->sent->retransmits)
      m.values["iperf_retransmits"] = static_cast<double>(*client->sent->retransmits);
    else
      m.absent("iperf_retransmits",
               "iperf3's sender reported no retransmits (sum_sent.retransmits: its kernel gave "
               "no TCP_INFO)");
  }
  return m;
}

}  // namespace rocehil::run
