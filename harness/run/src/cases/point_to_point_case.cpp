#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "cases/case_agents.hpp"
#include "cases/case_pacing.hpp"
#include "cases/case_traffic.hpp"
#include "cases/case_volume.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/run/case_metrics.hpp"
#include "rocehil/run/perftest_pair.hpp"
#include "rocehil/run/point_to_point.hpp"
#include "rocehil/run/result_json.hpp"
#include "rocehil/run/suite_check.hpp"
#include "rocehil/run/transport_fault.hpp"

namespace rocehil::run::case_traffic {

namespace {

traffic::Opcode opcode_named(const std::string& name) {
  for (const auto op : {traffic::Opcode::write, traffic::Opcode::write_with_imm,
                        traffic::Opcode::send, traffic::Opcode::read})
    if (name == traffic::to_string(op)) return op;
  return traffic::Opcode::write;  // the suite loader accepts only the four above
}

agent::SetupRequest side_setup(const CaseContext& c, const inventory::Host& host,
                               agent::Role role) {
  const auto& tc = *c.test_case;
  const auto& nic = host.nics.front();
  const bool lat = c.test->workload == "lat";
  agent::SetupRequest s;
  s.provider = c.test->settings.provider.empty() ? std::string(inventory::to_string(host.provider))
                                                 : c.test->settings.provider;
  s.device = nic.device;
  s.port = static_cast<std::uint8_t>(nic.port);
  s.gid_index = nic.gid_index;
  s.address = nic.ip;
  s.workload = lat ? agent::Workload::lat : agent::Workload::bw;
  s.role = role;
  s.opcode = lat ? traffic::Opcode::send : opcode_named(c.test->settings.opcode);
  if (!lat && c.test->settings.transport == "ud") s.transport = traffic::QpType::ud;
  if (c.test->settings.memory == "gpu") s.gpu = nic.gpu;  // suite_check: every side has one
  s.qps = lat ? 1 : tc.qps;
  s.message_bytes = static_cast<std::uint32_t>(tc.size);
  s.traffic_class = static_cast<std::uint8_t>(tc.traffic_class);
  for (const int tclass : tc.per_qp_traffic_classes)
    s.traffic_classes.push_back(static_cast<std::uint8_t>(tclass));
  s.mtu = c.test->settings.mtu;
  s.tx_depth = c.test->settings.tx_depth;
  s.sl = static_cast<std::uint8_t>(c.test->settings.sl);
  s.ack_timeout_us = suites::ack_timeout_us(c.test->settings.ack_timeout);
  s.link_gbps = nic.link_gbps;
  if (role == agent::Role::client) s.rate_bps = sender_rate_bps(c.test->settings, nic);
  return s;
}

// The agent of one side of a point-to-point case; a failure to start it is the host's.
std::unique_ptr<remote::AgentLink> launch_on(const CaseContext& c, const inventory::Host& host) {
  return in_phase("launch", host.name, [&] { return open_agent(c, host, host.name); });
}

// engine perftest: the same case as perftest's tools run it, each side with its host's NIC.
agent::PerftestRequest perftest_side(const CaseContext& c, const inventory::Host& host,
                                     agent::Role role) {
  const auto& settings = c.test->settings;
  const auto& nic = host.nics.front();
  const bool lat = c.test->workload == "lat";
  agent::PerftestRequest p;
  p.role = role;
  // rocehil's lat is a SEND ping-pong: ib_send_lat measures the same thing.
  p.tool = lat ? "send_lat" : settings.opcode + "_bw";
  p.device = nic.device;
  p.port = static_cast<std::uint8_t>(nic.port);
  p.gid_index = nic.gid_index;
  p.size = c.test_case->size;
  p.qps = lat ? 1 : c.test_case->qps;
  if (lat)
    p.iterations = settings.iterations;
  else if (const auto messages = volume_messages(*c.test, c.test_case->size); messages > 0)
    p.iterations = messages;  // -n counts per QP (perftest_resources.c: iters * num_of_qps)
  else                        // perftest takes whole seconds
    p.seconds = static_cast<std::uint32_t>(std::max(1.0, std::ceil(settings.duration_s)));
  p.traffic_class = c.test_case->traffic_class;
  // The TX depth and path MTU rocehil's own runs use, and no inline data (rocehil's agent posts
  // none; perftest's latency tests would inline small messages), so that the two engines run
  // the same test and a calibration compares like with like.
  if (!lat) p.tx_depth = settings.tx_depth;
  p.mtu = settings.mtu;
  p.sl = settings.sl;
  if (p.tool != "read_bw") p.inline_bytes = 0;
  if (settings.transport == "ud") p.transport = traffic::QpType::ud;
  if (role == agent::Role::client) p.rate_bps = sender_rate_bps(settings, nic);
  return p;
}

// run.json's "volume", and a run that moved less than asked fails saying so (unless something
// that explains it already did, or it was interrupted).
void finish_volume(const VolumeMoved& v, TrafficOutcome& out) {
  out.raw["volume"] = volume_json(v);
  if (out.failure || out.interrupted) return;
  if (const auto why = volume_shortfall(v))
    out.failure = reports::AttemptError{"", "traffic", *why};
}

TrafficOutcome run_perftest_case(const CaseContext& c) {
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  const inventory::Host& client_host = *hosts.at(0);
  const inventory::Host& server_host = *hosts.at(1);
  PerftestPairConfig config;
  config.server = perftest_side(c, server_host, agent::Role::server);
  config.client = perftest_side(c, client_host, agent::Role::client);
  config.client.server = server_host.nics.front().ip;
  config.reply_timeout = c.timeout;
  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  const AgentsClosedOnExit closer{agents};
  agents.push_back(launch_on(c, client_host));
  agents.push_back(launch_on(c, server_host));
  if (c.before_first_packet) c.before_first_packet();
  const double planned = c.test->workload == "lat" ? 0 : config.client.seconds;
  // perftest agrees no start time: its traffic starts about when its client does (in a case
  // with parts, once the time the parts agreed on has come).
  std::int64_t start_ns = wall_clock_ns();
  if (c.agree_start) {
    start_ns = c.agree_start(start_ns);
    std::this_thread::sleep_for(std::chrono::nanoseconds(start_ns - wall_clock_ns()));
  }
  if (c.on_traffic_start) c.on_traffic_start(start_ns);
  const PerftestPairResult result = in_phase("perftest", "", [&] {
    return run_perftest_pair(
        *agents[0], *agents[1], config,
        [&](double seconds) {
          if (c.on_progress && planned > 0) c.on_progress(std::min(1.0, seconds / planned));
        },
        *c.interrupt);
  });
  TrafficOutcome out;
  out.metrics = perftest_metrics(result);
  out.hosts = {client_host.name, server_host.name};
  for (const auto& [side, host] :
       {std::pair{&result.client, client_host.name}, std::pair{&result.server, server_host.name}})
    if (side->results)
      for (const auto& d : side->results->nics) out.nics.push_back({host, d});
  out.cnps_unknown = "the perftest engine counts no CNPs per QP";
  out.raw = perftest_pair_json(config, result);
  if (c.test->settings.rate)
    out.raw["pacing"] =
        perftest_pacing_json(c.test->settings, client_host.name, client_host.nics.front(),
                             result.client.results ? &*result.client.results : nullptr);
  if (result.client.results && result.client.results->report)
    out.seconds = static_cast<double>(config.client.seconds);
  out.interrupted = result.interrupted;
  if (const auto failure = perftest_failure(result))
    out.failure = reports::AttemptError{
        failure->side == agents[1]->name() ? server_host.name : client_host.name, "perftest",
        failure->message};
  if (c.test->workload == "bw" && config.client.iterations > 0) {
    // perftest's row says the iterations each QP ran; a run that did not finish has no row.
    VolumeMoved v;
    v.bytes_per_qp = config.client.iterations * config.client.size;
    v.qps = config.client.qps;
    if (const auto& r = result.client.results; r && r->report && r->report->bw && !r->stopped) {
      v.moved = r->report->bw->bytes * r->report->bw->iterations * config.client.qps;
      v.qps_short = r->report->bw->iterations < config.client.iterations ? v.qps : 0;
    }
    finish_volume(v, out);
  }
  return out;
}

TrafficOutcome run_rocehil_case(const CaseContext& c) {
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  const inventory::Host& client_host = *hosts.at(0);
  const inventory::Host& server_host = *hosts.at(1);
  PointToPointConfig config;
  config.client = side_setup(c, client_host, agent::Role::client);
  config.server = side_setup(c, server_host, agent::Role::server);
  const auto& settings = c.test->settings;
  if (c.test->workload == "lat") {
    config.start.iterations = settings.iterations;
    config.start.warmup_iterations = settings.warmup;
  } else if (const auto messages = volume_messages(*c.test, c.test_case->size); messages > 0) {
    config.start.messages_per_qp = messages;
    config.start.warmup_seconds = 0;  // by volume all of it is measured
  } else {
    config.start.seconds = settings.duration_s;
  }
  config.reply_timeout = c.timeout;
  config.on_start = c.on_traffic_start;
  config.agree_start = c.agree_start;
  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  const AgentsClosedOnExit closer{agents};
  agents.push_back(launch_on(c, client_host));
  agents.push_back(launch_on(c, server_host));
  if (c.before_first_packet) c.before_first_packet();
  remote::AgentLink& client = *agents[0];
  remote::AgentLink& server = *agents[1];
  const double planned = c.test->workload == "lat" ? 0 : settings.duration_s;
  // By volume, progress is the bytes moved of those asked.
  const double asked_bytes = static_cast<double>(config.start.messages_per_qp) *
                             static_cast<double>(c.test_case->size) * c.test_case->qps;
  const PointToPointResult result = in_phase("traffic", "", [&] {
    return run_point_to_point(
        client, server, config,
        [&](const agent::StatsEvent& stats) {
          if (!c.on_progress) return;
          if (asked_bytes > 0)
            c.on_progress(std::min(1.0, static_cast<double>(stats.bytes) / asked_bytes));
          else if (planned > 0)
            c.on_progress(std::min(1.0, stats.t_s / planned));
        },
        *c.interrupt);
  });
  TrafficOutcome out;
  out.metrics = point_to_point_metrics(result, config.client.provider);
  for (const auto& d : result.client.results.nics) out.nics.push_back({client_host.name, d});
  for (const auto& d : result.server.results.nics) out.nics.push_back({server_host.name, d});
  for (const auto& e : result.client.results.events) out.events.push_back({client_host.name, e});
  for (const auto& e : result.server.results.events) out.events.push_back({server_host.name, e});
  add_cpu(result.client.results, client_host.name, 0, out.cpu);
  add_cpu(result.server.results, server_host.name, 1, out.cpu);
  if (result.client.results.timeline)
    out.timelines.push_back({client_host.name, *result.client.results.timeline,
                             qp_stalls_of(result.client.results, server_host.name)});
  out.hosts = {client_host.name, server_host.name};
  for (const auto& [side, host, peer] :
       {std::tuple{&result.client, client_host.name, server_host.name},
        std::tuple{&result.server, server_host.name, client_host.name}})
    if (out.cnps_unknown.empty())
      add_cnps_sent(side->results, host,
                    std::vector<std::string>(side->results.per_qp.size(), peer), out.cnps_sent,
                    out.cnps_unknown);
  out.raw = point_to_point_json(config, result);
  if (c.test->settings.rate)
    out.raw["pacing"] = pacing_json(c.test->settings, client_host.name, client_host.nics.front(),
                                    result.client.results);
  out.seconds = result.client.results.seconds;
  out.interrupted = result.interrupted;
  // Its errors stay in the errors metric; one the fabric caused also fails the case, as in a
  // collective. The blame goes to the far end of the failing QP, as failing_rank's does.
  const std::string client_name = fmt::format("client ({})", client_host.name);
  const std::string server_name = fmt::format("server ({})", server_host.name);
  const bool client_failed = result.client.results.errors > 0;
  if (!out.interrupted)
    out.failure = fabric_fault({{client_name, server_name, &result.client.results},
                                {server_name, client_name, &result.server.results}},
                               client_failed ? server_host.name : client_host.name);
  if (config.start.messages_per_qp > 0) {
    VolumeMoved v;
    v.bytes_per_qp = config.start.messages_per_qp * c.test_case->size;
    v.qps = c.test_case->qps;
    std::uint64_t moved = 0;
    for (const auto& q : result.client.results.per_qp) {
      moved += q.bytes;
      if (q.bytes < v.bytes_per_qp) ++v.qps_short;
    }
    // A QP the sender never reported moved nothing.
    if (result.client.results.per_qp.size() < v.qps)
      v.qps_short += v.qps - static_cast<std::uint32_t>(result.client.results.per_qp.size());
    v.moved = moved;
    finish_volume(v, out);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// How far apart one engine's rounds were: (largest - smallest) / median.
double spread(const std::vector<double>& v) {
  const double m = median(v);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return m > 0 ? (*hi - *lo) / m : 0;
}

// calibrate_bw and calibrate_lat: the case run by rocehil's engine and by perftest, `rounds`
// times each, interleaved (perftest first in odd rounds, rocehil first in even ones) so that a
// drift of the fabric during the run weighs on both alike. Each engine's value is the median of
// its rounds; the first run that fails ends the case with that failure (on a host without an
// RDMA device, perftest's first run, in its own words).
TrafficOutcome run_calibration_case(const CaseContext& c) {
  suites::SuiteTest test = *c.test;
  test.workload = std::string(suites::measured_workload(*c.test));
  // perftest takes whole seconds; rocehil runs as long so both move the same work.
  test.settings.duration_s = std::max(1.0, std::ceil(test.settings.duration_s));
  const bool bw = test.workload == "bw";
  const std::string metric = bw ? "busbw_gbps" : "lat_p50_us";
  const int rounds = c.test->settings.rounds;
  const int runs = 2 * rounds;
  std::vector<double> values[2];  // rocehil, perftest
  constexpr const char* engines[2] = {"rocehil", "perftest"};
  TrafficOutcome out;
  nlohmann::json log = nlohmann::json::array();
  double errors = 0;
  const auto finish_raw = [&] {
    out.raw = {{"calibration",
                {{"workload", test.workload},
                 {"metric", metric},
                 {"rounds", rounds},
                 {"rocehil", values[0]},
                 {"perftest", values[1]},
                 {"runs", log}}}};
  };
  for (int run = 0; run < runs; ++run) {
    const int round = run / 2;
    const int engine = (run + round) % 2 == 0 ? 1 : 0;  // perftest, rocehil | rocehil, perftest
    test.settings.engine = engines[engine];
    CaseContext sub = c;
    sub.test = &test;
    sub.on_progress = [&c, run, runs](double f) {
      if (c.on_progress) c.on_progress((run + f) / runs);
    };
    TrafficOutcome o = engine == 1 ? run_perftest_case(sub) : run_rocehil_case(sub);
    const auto value = o.metrics.values.find(metric);
    log.push_back({{"round", round + 1},
                   {"engine", engines[engine]},
                   {"value", value == o.metrics.values.end() ? nlohmann::json(nullptr)
                                                             : nlohmann::json(value->second)},
                   {"traffic", std::move(o.raw)}});
    for (auto& n : o.nics) out.nics.push_back(std::move(n));
    for (auto& e : o.events) out.events.push_back(std::move(e));
    for (auto& s : o.cpu) out.cpu.push_back(std::move(s));
    out.seconds += o.seconds;
    if (const auto e = o.metrics.values.find("errors"); e != o.metrics.values.end())
      errors += e->second;
    if (o.interrupted || o.failure || value == o.metrics.values.end()) {
      out.interrupted = o.interrupted;
      out.failure = o.failure;
      if (!out.failure && !out.interrupted)
        out.failure = reports::AttemptError{
            "", engine == 1 ? "perftest" : "traffic",
            fmt::format("the {} engine's run in round {} measured no {}: {}", engines[engine],
                        round + 1, metric, o.metrics.unmeasured[metric])};
      finish_raw();
      return out;
    }
    values[engine].push_back(value->second);
  }
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  out.hosts = {hosts.at(0)->name, hosts.at(1)->name};
  out.cnps_unknown = "a calibration runs perftest, which counts no CNPs per QP";
  const double ours = median(values[0]), theirs = median(values[1]);
  out.metrics.values = {{"calibration_rocehil", ours},
                        {"calibration_perftest", theirs},
                        {"calibration_spread", std::max(spread(values[0]), spread(values[1]))},
                        {"errors", errors}};
  if (theirs > 0)
    out.metrics.values["calibration_ratio"] = ours / theirs;
  else
    out.metrics.absent("calibration_ratio", fmt::format("perftest's {} was 0", metric));
  finish_raw();
  return out;
}

}  // namespace

TrafficOutcome run_point_to_point_case(const CaseContext& c) {
  if (c.test->workload == "iperf3") return run_iperf3_case(c);
  if (suites::is_calibration(*c.test)) return run_calibration_case(c);
  if (c.test->settings.engine == "perftest") return run_perftest_case(c);
  return run_rocehil_case(c);
}

}  // namespace rocehil::run::case_traffic
