// workload iperf3: background traffic that is not RDMA, between the test's first two hosts, run
// by their agents as iperf3 (docs/suites.md, "iperf3 background traffic").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cases/case_agents.hpp"
#include "cases/case_traffic.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/run/iperf3_pair.hpp"
#include "rocehil/run/suite_check.hpp"

namespace rocehil::run::case_traffic {

namespace {

// The rate in bits/s: `%` of the client's link (the inventory's link_gbps), as the SONiC plan
// gives it per port. 0: none (TCP as fast as it can).
std::uint64_t resolved_rate_bps(const CaseContext& c, const inventory::Host& client) {
  const auto& rate = c.test->settings.rate;
  if (!rate) return 0;
  const double link_gbps = client.nics.front().link_gbps;
  if (rate->percent && link_gbps <= 0)
    throw input_error(
        fmt::format("rate {} is a share of {}'s link, and {} gives its NIC no "
                    "link_gbps; give it, or write the rate in bits (200Mbit/s)",
                    rate->text, client.name, c.inventory->file));
  return static_cast<std::uint64_t>(std::llround(rate->bits_per_s(link_gbps * 1e9)));
}

}  // namespace

TrafficOutcome run_iperf3_case(const CaseContext& c) {
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  const inventory::Host& client_host = *hosts.at(0);
  const inventory::Host& server_host = *hosts.at(1);
  const auto& settings = c.test->settings;
  Iperf3PairConfig config;
  config.server.role = agent::Role::server;
  config.server.protocol = settings.iperf3.protocol;
  config.server.bind = server_host.nics.front().ip;
  // iperf3 takes whole seconds (-t reads an integer): rounded up, as perftest's -D is.
  config.server.seconds = static_cast<std::uint32_t>(std::max(1.0, std::ceil(settings.duration_s)));
  config.client = config.server;
  config.client.role = agent::Role::client;
  config.client.bind = client_host.nics.front().ip;
  config.client.server = server_host.nics.front().ip;
  config.client.rate_bps =
      in_phase("iperf3", client_host.name, [&] { return resolved_rate_bps(c, client_host); });
  config.client.tos = c.test_case->traffic_class;
  config.client.streams = settings.iperf3.streams;
  config.reply_timeout = c.timeout;
  // The agreed start lies a little ahead of the client's request, so that the injection and the
  // controller's probes (on_traffic_start) are ready before the first packet.
  config.start_after = std::chrono::milliseconds(200);
  config.agree_start = c.agree_start;

  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  const AgentsClosedOnExit closer{agents};
  agents.push_back(in_phase("launch", client_host.name,
                            [&] { return open_agent(c, client_host, client_host.name); }));
  agents.push_back(in_phase("launch", server_host.name,
                            [&] { return open_agent(c, server_host, server_host.name); }));
  if (c.before_first_packet) c.before_first_packet();
  Iperf3Pair pair(*agents[0], *agents[1], config);
  const double planned = config.client.seconds;
  in_phase("iperf3", "", [&] {
    pair.start(*c.interrupt);
    if (pair.client_started() && c.on_traffic_start) c.on_traffic_start(pair.config().client.at_ns);
    while (!pair.poll(std::chrono::milliseconds(50))) {
      if (c.interrupt->load()) pair.stop();
      if (c.on_progress && planned > 0)
        c.on_progress(std::min(1.0, pair.seconds_running() / planned));
    }
  });
  const Iperf3PairResult& result = pair.result();
  TrafficOutcome out;
  out.metrics = iperf3_metrics(result);
  out.hosts = {client_host.name, server_host.name};
  out.cnps_unknown = "workload iperf3 sends no RoCE, so its hosts send no CNPs";
  out.raw = iperf3_pair_json(pair.config(), result);
  if (result.client.results && result.client.results->report)
    out.seconds = static_cast<double>(config.client.seconds);
  out.interrupted = result.interrupted;
  if (const auto failure = iperf3_failure(result))
    out.failure = reports::AttemptError{
        failure->side == agents[1]->name() ? server_host.name : client_host.name, "iperf3",
        failure->message};
  return out;
}

}  // namespace rocehil::run::case_traffic
