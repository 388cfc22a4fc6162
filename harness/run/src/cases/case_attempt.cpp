#include "cases/case_attempt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <utility>

#include "basics/agent_conversation.hpp"
#include "cases/capture_keeping.hpp"
#include "cases/case_agents.hpp"
#include "cases/case_events.hpp"
#include "cases/case_fabric_events.hpp"
#include "cases/case_traffic.hpp"
#include "cases/parts.hpp"
#include "metrics/switch_polling.hpp"
#include "metrics/switch_sampler.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/scheduling.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/run/capture_metrics.hpp"
#include "rocehil/run/case_metrics.hpp"
#include "rocehil/run/collective_ranks.hpp"
#include "rocehil/run/collective_run.hpp"
#include "rocehil/run/nic_metrics.hpp"
#include "rocehil/run/perftest_pair.hpp"
#include "rocehil/run/point_to_point.hpp"
#include "rocehil/run/reconciliation.hpp"
#include "rocehil/run/result_json.hpp"
#include "rocehil/run/suite_check.hpp"
#include "rocehil/run/switch_metrics.hpp"
#include "rocehil/run/switch_timeline.hpp"
#include "rocehil/run/timeline_metrics.hpp"
#include "rocehil/run/transport_fault.hpp"
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::run {

namespace {

using namespace case_traffic;

using Clock = std::chrono::steady_clock;

std::int64_t unix_ns_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_collective(const suites::SuiteTest& test) {
  return !suites::is_point_to_point(test);
}

RankSettings rank_settings(const CaseContext& c) {
  const auto& tc = *c.test_case;
  return {.pattern = traffic::pattern_from_name(c.test->workload).value(),
          .placement = traffic::placement_from_name(tc.placement).value(),
          .provider = c.test->settings.provider,
          .mtu = c.test->settings.mtu,
          .tx_depth = c.test->settings.tx_depth,
          .sl = c.test->settings.sl,
          .ack_timeout = c.test->settings.ack_timeout,
          .traffic_class = tc.traffic_class,
          .per_qp_traffic_classes = tc.per_qp_traffic_classes,
          .multiplex = c.multiplex};
}

// The hello an agent answers, checked for the protocol; `greet` asks and waits, `hello_of` only
// waits (the hello was sent with others, so the agents answer together).
agent::HelloReply hello_of(remote::AgentLink& link, std::chrono::seconds timeout) {
  agent::HelloReply hello = conversation::expect<agent::HelloReply>(link, "hello", timeout);
  conversation::check_protocol(link, hello);
  return hello;
}

agent::HelloReply greet(remote::AgentLink& link, std::chrono::seconds timeout) {
  link.send(agent::Request{0, agent::HelloRequest{}});
  return hello_of(link, timeout);
}

// ---- captures ----

struct RunningCapture {
  std::string point;
  std::string host;
  std::unique_ptr<remote::AgentLink> link;
};

std::vector<RunningCapture> start_captures(const CaseContext& c) {
  std::vector<RunningCapture> running;
  for (const auto& name : c.test->settings.captures) {
    const auto* point = c.inventory->find_capture(name);
    const auto* host = c.inventory->find_host(point->host);
    in_phase("capture start", host->name, [&] {
      running.push_back({name, host->name, open_agent(c, *host, host->name)});
    });
  }
  for (auto& r : running) {
    const auto* point = c.inventory->find_capture(r.point);
    in_phase("capture start", r.host, [&] {
      greet(*r.link, c.timeout);
      agent::CaptureStartRequest start;
      start.backend = point->backend;
      start.iface = point->interface;
      for (const auto& arg : point->dpdk_args) {
        if (!start.dpdk_args.empty()) start.dpdk_args += ' ';
        start.dpdk_args += arg;
      }
      start.filter = c.suite->capture.filter;
      start.snaplen = c.suite->capture.snaplen;
      start.link_gbps = point->link_gbps;
      if (c.keeping != nullptr && c.keeping->writes()) {
        start.write = capture_write_path(*c.keeping, c.case_index, c.attempt_index, r.point);
        start.ring_files = 2;  // the newest frames, at most mb_per_capture
        start.ring_mb = std::max<std::uint32_t>(1, c.keeping->mb_per_capture / 2);
      }
      const auto& d = point->mirrors.direction;
      start.direction = d == "spine-to-leaf" || d == "leaf-to-spine" ? d : "unknown";
      if (point->remote) {
        start.remote_session = point->remote->session;
        if (!point->remote->source.empty()) start.remote_source = point->remote->source;
      }
      r.link->send(agent::Request{1, start});
      conversation::expect<agent::CaptureStartedReply>(*r.link, "capture_start", c.timeout);
    });
  }
  return running;
}

std::vector<agent::CaptureSummaryEvent> stop_captures(const CaseContext& c,
                                                      std::vector<RunningCapture>& running) {
  std::vector<agent::CaptureSummaryEvent> summaries;
  for (auto& r : running)
    in_phase("capture stop", r.host, [&] {
      r.link->send(agent::Request{2, agent::CaptureStopRequest{}});
    });
  for (auto& r : running)
    in_phase("capture stop", r.host, [&] {
      summaries.push_back(
          conversation::expect<agent::CaptureSummaryEvent>(*r.link, "capture_stop", c.timeout));
    });
  return summaries;
}

nlohmann::json captures_json(const std::vector<RunningCapture>& running,
                             const std::vector<agent::CaptureSummaryEvent>& summaries) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < summaries.size() && i < running.size(); ++i) {
    const auto& s = summaries[i];
    nlohmann::json analysis;
    try {
      analysis = nlohmann::json::parse(s.analysis_json);
    } catch (const std::exception&) {
      analysis = s.analysis_json;  // kept as it came; capture_metrics says what is wrong
    }
    out.push_back({{"point", running[i].point},
                   {"host", running[i].host},
                   {"iface", s.iface},
                   {"frames", s.frames},
                   {"dropped_buffer", s.dropped_buffer},
                   {"dropped_interface", s.dropped_interface},
                   {"lost_upstream", s.lost_upstream},
                   {"coverage", s.coverage},
                   {"written_on_host", s.files},
                   {"write_error", s.write_error},
                   {"analysis", analysis}});
  }
  return out;
}

// ---- the workloads ----

void check_collective_hello(const CaseContext& c, const CollectiveRanks& ranks,
                            remote::AgentLink& link, std::size_t r) {
  in_phase("hello", ranks.hosts[r], [&] {
    const agent::HelloReply hello = hello_of(link, c.timeout);
    conversation::check_hello(link, hello, ranks.setups[r].provider);
    if (std::find(hello.workloads.begin(), hello.workloads.end(), "collective") ==
        hello.workloads.end())
      throw Error(ExitCode::infrastructure,
                  fmt::format("agent on {} (rocehil {}) runs no collectives: deploy this "
                              "rocehil there (rocehil run --deploy)",
                              link.name(), hello.version));
  });
}

TrafficOutcome run_collective(const CaseContext& c) {
  const auto& tc = *c.test_case;
  const auto& settings = c.test->settings;
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  const CollectiveRanks ranks =
      collective_ranks(hosts, rank_settings(c), c.inventory->file, settings.hosts);
  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  const AgentsClosedOnExit closer{agents};
  std::vector<remote::AgentLink*> links;
  // Bounded fan-out: at most `fanout` ssh sessions are opening at once; each wave is launched,
  // greeted together and answered before the next starts.
  const std::size_t n = ranks.commands.size();
  for (std::size_t wave = 0; wave < n; wave += std::max<std::size_t>(c.fanout, 1)) {
    const std::size_t end = std::min(n, wave + std::max<std::size_t>(c.fanout, 1));
    for (std::size_t r = wave; r < end; ++r)
      in_phase("launch", ranks.hosts[r], [&] {
        agents.push_back(c.dialed != nullptr
                             ? c.dialed->open_session(ranks.hosts[r], ranks.commands[r].name)
                             : remote::launch_agent(ranks.commands[r]));
        links.push_back(agents.back().get());
      });
    for (std::size_t r = wave; r < end; ++r)
      in_phase("hello", ranks.hosts[r], [&] {
        links[r]->send(agent::Request{0, agent::HelloRequest{}});
      });
    for (std::size_t r = wave; r < end; ++r) check_collective_hello(c, ranks, *links[r], r);
  }
  CollectiveJob job;
  job.plan = {.pattern = rank_settings(c).pattern,
              .ranks = static_cast<int>(links.size()),
              .bytes = tc.size,
              .ranks_per_host = ranks.ranks_per_host,
              .pipeline = settings.pipeline,
              .seed = 1};
  job.scaling = {.qps = tc.qps, .strategy = traffic::qp_strategy_from_name(tc.strategy).value()};
  job.warmup_iterations = settings.warmup;
  job.iterations = settings.iterations;
  if (settings.collective_by_duration) job.duration_s = settings.duration_s;
  job.reply_timeout = c.timeout;
  job.on_measured_start = c.on_traffic_start;
  job.agree_start = c.agree_start;
  job.stagger_ns = c.stagger_ns;
  if (c.before_first_packet) c.before_first_packet();
  const CollectiveCase result = in_phase("traffic", "", [&] {
    return run_collective_case(
        links, ranks.setups, job,
        [&](std::uint64_t done, std::uint64_t total) {
          if (c.on_progress && total > 0)
            c.on_progress(static_cast<double>(done) / static_cast<double>(total));
        },
        *c.interrupt);
  });
  TrafficOutcome out;
  out.metrics = collective_metrics(result, ranks.provider);
  out.hosts = ranks.hosts;
  const auto plan = traffic::make_plan(result.job.plan);
  std::vector<int> peers;
  for (std::size_t r = 0; r < result.results.size() && r < ranks.hosts.size(); ++r) {
    for (const auto& d : result.results[r].nics) out.nics.push_back({ranks.hosts[r], d});
    if (result.results[r].timeline)
      out.timelines.push_back(
          {fmt::format("rank {} ({})", r, ranks.hosts[r]), *result.results[r].timeline});
    for (const auto& e : result.results[r].events) out.events.push_back({ranks.hosts[r], e});
    add_cpu(result.results[r], ranks.hosts[r], r, out.cpu);
    // The plan's peers of this rank, `qps` QPs each, in QP order.
    peers.clear();
    plan->peers(static_cast<int>(r), peers);
    std::vector<std::string> qp_peers;
    for (const int p : peers)
      for (std::uint32_t q = 0; q < result.job.scaling.qps; ++q)
        qp_peers.push_back(ranks.hosts[static_cast<std::size_t>(p)]);
    if (out.cnps_unknown.empty())
      add_cnps_sent(result.results[r], ranks.hosts[r], qp_peers, out.cnps_sent, out.cnps_unknown);
  }
  out.raw = collective_json(ranks.infos, ranks.provider, tc.placement, {result});
  out.seconds = result.summary.time_us * static_cast<double>(result.summary.iterations) / 1e6;
  out.interrupted = result.interrupted;
  if (result.errors > 0 && !result.interrupted) {
    // A transport error ends a collective for every rank: nothing it measured stands.
    const int suspect = failing_rank(result);
    std::string blame;
    if (suspect >= 0)
      blame = fmt::format("; the failing QPs point at rank {} ({})", suspect,
                          result.rank_names[static_cast<std::size_t>(suspect)]);
    const std::string host = suspect >= 0 ? ranks.hosts[static_cast<std::size_t>(suspect)] : "";
    std::vector<TrafficSide> sides;
    const auto rank_name = [&](std::size_t r) {
      return fmt::format("rank {} ({})", r, r < ranks.hosts.size() ? ranks.hosts[r] : "?");
    };
    for (std::size_t r = 0; r < result.results.size(); ++r) {
      const int peer = failing_peer(result, r);
      sides.push_back({rank_name(r), peer >= 0 ? rank_name(static_cast<std::size_t>(peer)) : "",
                       &result.results[r]});
    }
    out.failure = fabric_fault(sides, host);
    if (out.failure)
      out.failure->message += blame;
    else
      out.failure = reports::AttemptError{host, "traffic",
                                          fmt::format("{} transport error(s), the first {}{}",
                                                      result.errors, result.first_error, blame)};
  }
  return out;
}

// The bytes each capture point kept, when it kept every frame (filter all): what the switch's
// own octet counters of the mirrored ports can be held against.
std::vector<MirrorBytes> mirror_bytes(const CaseContext& c,
                                      const std::vector<RunningCapture>& running,
                                      const std::vector<agent::CaptureSummaryEvent>& summaries) {
  std::vector<MirrorBytes> out;
  for (std::size_t i = 0; i < running.size() && i < summaries.size(); ++i) {
    MirrorBytes m{running[i].point, std::nullopt};
    // A remote mirror's tunnel packets are longer than the frames the switch mirrored: those are
    // counted as the mirrored frames' own lengths.
    if (c.suite->capture.filter == "all") try {
        const auto analysis = nlohmann::json::parse(summaries[i].analysis_json);
        const auto& mirror = analysis.at("mirror");
        m.bytes = mirror.at("frames").get<double>() > 0 ? mirror.at("mirrored_bytes").get<double>()
                                                        : analysis.at("bytes").get<double>();
      } catch (const std::exception&) {
        // capture_metrics has already said why this analysis cannot be read
      }
    out.push_back(std::move(m));
  }
  return out;
}

// cnp_reconciliation, pfc_reconciliation and the switches' two, with both sides kept in
// raw.reconciliation.
void reconcile(const CaseContext& c, const TrafficOutcome& traffic,
               const std::vector<HostNic>& nics, const std::vector<MirrorBytes>& mirrors,
               const std::vector<switches::SwitchDelta>& switch_deltas, suites::Measured& measured,
               nlohmann::json& raw) {
  const auto seen = [&](const char* key) -> std::optional<double> {
    const auto it = measured.values.find(key);
    return it == measured.values.end() ? std::nullopt : std::optional<double>(it->second);
  };
  const auto& captures = c.test->settings.captures;
  Reconciliation cnp;
  if (!traffic.cnps_unknown.empty() && seen("mirror_cnps"))
    cnp.measured.absent("cnp_reconciliation", traffic.cnps_unknown);
  else
    cnp = cnp_reconciliation(spine_coverage(*c.inventory, captures, traffic.hosts),
                             traffic.cnps_sent, seen("mirror_cnps"));
  std::vector<MirroredNicLink> links = mirrored_nic_links(*c.inventory, captures, traffic.hosts);
  for (MirroredNicLink& l : links) {
    l.tx_pause = pause_frames(nics, l.host, "tx");
    l.rx_pause = pause_frames(nics, l.host, "rx");
  }
  const Reconciliation pfc = pfc_reconciliation(links, seen("pfc_frames"));
  std::vector<HostSwitchPort> ports = host_switch_ports(*c.inventory, traffic.hosts);
  for (HostSwitchPort& p : ports) p.nic_tx_pause = pause_frames(nics, p.host, "tx");
  const Reconciliation switch_pfc = switch_pfc_reconciliation(ports, switch_deltas);
  const Reconciliation switch_mirror =
      switch_mirror_reconciliation(*c.inventory, mirrors, switch_deltas);
  for (const Reconciliation* r : {&std::as_const(cnp), &pfc, &switch_pfc, &switch_mirror})
    measured.merge(r->measured);
  raw["reconciliation"] = {{"cnp", cnp.to_json()},
                           {"pfc", pfc.to_json()},
                           {"switch_pfc", switch_pfc.to_json()},
                           {"switch_mirror", switch_mirror.to_json()}};
  // The same per priority: a class whose pauses one side misses is seen apart from the rest.
  raw["reconciliation"]["pfc_by_priority"] = nlohmann::json::array();
  raw["reconciliation"]["switch_pfc_by_priority"] = nlohmann::json::array();
  for (int p = 0; p < 8; ++p) {
    std::vector<MirroredNicLink> of_p = links;
    for (MirroredNicLink& l : of_p) {
      l.tx_pause = pause_frames(nics, l.host, "tx", p);
      l.rx_pause = pause_frames(nics, l.host, "rx", p);
    }
    const Reconciliation pfc_p =
        pfc_reconciliation(of_p, seen(fmt::format("pfc_frames[{}]", p).c_str()),
                           fmt::format("pfc_reconciliation[{}]", p));
    std::vector<HostSwitchPort> ports_p = ports;
    for (HostSwitchPort& hp : ports_p) hp.nic_tx_pause = pause_frames(nics, hp.host, "tx", p);
    const Reconciliation switch_pfc_p = switch_pfc_reconciliation(ports_p, switch_deltas, p);
    measured.merge(pfc_p.measured);
    measured.merge(switch_pfc_p.measured);
    raw["reconciliation"]["pfc_by_priority"].push_back(pfc_p.to_json());
    raw["reconciliation"]["switch_pfc_by_priority"].push_back(switch_pfc_p.to_json());
  }
}

// The events stopped and waited for, what they took down brought up, and all of it recorded.
void end_events(EventsRun& events, reports::Attempt& attempt) {
  events.give_up();
  events.wait();
  events.bring_up_left();
  attempt.raw["fabric_events"] = events.json();
  if (nlohmann::json inject = events.inject_json(); !inject.is_null())
    attempt.raw["inject"] = std::move(inject);
}

}  // namespace

std::string host_named_in(const std::string& message) {
  constexpr std::string_view prefix = "agent on ";
  const auto at = message.find(prefix);
  if (at == std::string::npos) return "";
  std::string name = message.substr(at + prefix.size());
  name = name.substr(0, name.find_first_of(": "));
  return name.substr(0, name.find('/'));
}

CaseShape case_shape(const CaseContext& c) {
  if (!c.test->parts.empty()) return parts_shape(c, case_shape);
  CaseShape shape;
  const auto hosts = traffic_hosts(*c.inventory, *c.test);
  std::vector<double> speeds;
  int n = 0;
  if (is_collective(*c.test)) {
    const CollectiveRanks ranks =
        collective_ranks(hosts, rank_settings(c), c.inventory->file, c.test->settings.hosts);
    n = static_cast<int>(ranks.hosts.size());
    for (const auto& h : ranks.hosts)
      if (std::find(shape.hosts.begin(), shape.hosts.end(), h) == shape.hosts.end())
        shape.hosts.push_back(h);
    speeds = ranks.link_gbps;
  } else {
    n = 2;
    for (std::size_t i = 0; i < 2 && i < hosts.size(); ++i) {
      shape.hosts.push_back(hosts[i]->name);
      speeds.push_back(hosts[i]->nics.front().link_gbps);
    }
  }
  shape.names = {{"n", n},
                 {"hosts", static_cast<double>(shape.hosts.size())},
                 {"qps", c.test_case->qps},
                 {"size", static_cast<double>(c.test_case->size)}};
  double slowest = 0;
  for (const double g : speeds)
    if (g > 0 && (slowest == 0 || g < slowest)) slowest = g;
  if (slowest > 0) shape.names["link_gbps"] = slowest;
  return shape;
}

namespace {

// The fabric events that happened and worked, as run.json records them ("link_down l1-s1").
std::vector<EventTime> events_happened(const nlohmann::json& raw) {
  std::vector<EventTime> out;
  if (!raw.contains("fabric_events")) return out;
  for (const auto& e : raw["fabric_events"]["events"])
    if (e.value("happened", false) && e.value("ok", false) && e.contains("started_ns"))
      out.push_back(
          {fmt::format("{} {}", e.value("action", std::string()), e.value("target", std::string())),
           e["started_ns"].get<std::int64_t>()});
  return out;
}

// The polling period of a case's switches while its traffic runs: 100 ms, or as seldom as the
// slowest of them refreshes its counters.
std::chrono::milliseconds sampling_period(const SwitchPolling& polling,
                                          const std::vector<std::string>& names) {
  return std::chrono::milliseconds(std::max(100, polling.counter_refresh_ms(names)));
}

// Whether a case's switch ports are polled while its traffic runs: a test with fabric events (the
// failover's picture and its recovery) or with parts (each part's share of the links).
bool polled_through(const suites::SuiteTest& test) {
  return !test.events.empty() || !test.parts.empty();
}

// switch_recovery_ms (the longest over the events) and the switches' side of the timeline in
// raw "switch_timeline"; absent, with the reason, when no switch was polled through the case.
void switch_timeline_metrics(const CaseContext& c, const std::vector<std::string>& scope,
                             const std::vector<SwitchSample>& samples,
                             const std::vector<EventTime>& events, std::chrono::milliseconds period,
                             std::int64_t traffic_start_ns, suites::Measured& measured,
                             nlohmann::json& raw) {
  if (!polled_through(*c.test)) return;
  if (samples.size() < 2) {
    if (!c.test->events.empty())
      measured.absent("switch_recovery_ms",
                      c.switch_polling ? "the case's switches were polled fewer than twice while "
                                         "its traffic ran"
                                       : "this run polls no switch: none in the inventory has "
                                         "snmp settings, or the run was given --no-switches");
    return;
  }
  const auto series = port_series(fabric_ports(*c.inventory, scope, case_shape(c).hosts), samples);
  nlohmann::json timeline =
      switch_timeline_json(series, events, static_cast<double>(period.count()), traffic_start_ns);
  if (!c.test->events.empty()) measured.merge(switch_recovery_metrics(timeline));
  raw["switch_timeline"] = std::move(timeline);
}

}  // namespace

reports::Attempt run_case_attempt(const CaseContext& c) {
  reports::Attempt attempt;
  attempt.start_ns = unix_ns_now();
  const auto started = Clock::now();
  std::vector<RunningCapture> captures;
  std::unique_ptr<EventsRun> events;  // the test's events and its inject, beside the traffic
  std::vector<std::string> switch_scope;
  SwitchesBefore switches_before;
  CaseContext traffic_context = c;
  const auto switches_polled = [&switches_before] {
    in_phase("switches", "", [&] { switches_before.wait(); });
  };
  traffic_context.before_first_packet = switches_polled;
  // The controller's own scheduling over the traffic, beside the agents': from the agreed start
  // (the first, for a calibration's rounds) to the workload's end.
  SchedulingProbe controller_cpu;
  // A case with fabric events or parts has its switches' ports polled while its traffic runs.
  SwitchSampler switch_sampler;
  std::chrono::milliseconds sampling{100};
  std::int64_t traffic_start_ns = 0;
  traffic_context.on_traffic_start = [&](std::int64_t at_ns) {
    if (events) events->traffic_starts_at(at_ns);
    if (!controller_cpu.running()) controller_cpu.start();
    if (c.switch_polling && polled_through(*c.test) && !switch_sampler.running()) {
      // The first poll a period before the traffic starts: the second before an event at
      // once is polled too.
      sampling = sampling_period(*c.switch_polling, switch_scope);
      traffic_start_ns = at_ns;
      switch_sampler.start(*c.switch_polling, switch_scope, sampling,
                           at_ns - std::chrono::nanoseconds(sampling).count());
    }
  };
  try {
    // The switches first, all at once: their counters before anything of the case moves, read
    // while the captures and the agents start.
    if (c.switch_polling) {
      switch_scope = switches_in_scope(*c.inventory, case_shape(c).hosts);
      switches_before = SwitchesBefore(*c.switch_polling, switch_scope);
    }
    captures = start_captures(c);
    if (!c.test->events.empty()) {
      switches_polled();  // an event may act at once
      events = std::make_unique<EventsRun>(c);
    }
    const auto run_one = [](const CaseContext& one) {
      return is_collective(*one.test) ? run_collective(one) : run_point_to_point_case(one);
    };
    TrafficOutcome traffic =
        c.test->parts.empty() ? run_one(traffic_context) : run_parts(traffic_context, run_one);
    const std::vector<SwitchSample> switch_samples = switch_sampler.stop();
    attempt.cpu = std::move(traffic.cpu);
    if (auto mine = controller_cpu.stop()) attempt.cpu.push_back({"controller", *mine, true});
    if (switches_before.begun() && !switches_before.waited())
      throw std::logic_error("the workload sent without waiting for the switches' counters");
    suites::Measured measured = std::move(traffic.metrics);
    const std::vector<HostNic> nics = distinct_nics(std::move(traffic.nics));
    measured.merge(nic_metrics(nics));
    attempt.raw["nics"] = nics_json(nics);
    attempt.metrics = measured.values;  // kept should a later phase fail
    attempt.unmeasured = measured.unmeasured;
    attempt.where = measured.where;  // a fabric fault is graded too: its errors say where
    attempt.raw["traffic"] = std::move(traffic.raw);
    if (!traffic.events.empty()) attempt.raw["device_events"] = device_events_json(traffic.events);
    if (traffic.failure) blame_port_down(*traffic.failure, traffic.events);
    // The events are over with the traffic: what they took down comes up before anything else,
    // and an event that failed, or never happened, leaves nothing the case measured standing.
    if (events) {
      end_events(*events, attempt);
      if (auto failed = events->failure(c.interrupt->load())) throw PhaseFailure{*failed};
    }
    // The senders' delivered bytes over time, against the events that happened: stalls and
    // recoveries (before a failure is thrown, so a failed case still shows its timeline).
    {
      nlohmann::json timeline;
      const std::vector<EventTime> happened = events_happened(attempt.raw);
      measured.merge(timeline_metrics(traffic.timelines, happened, timeline));
      switch_timeline_metrics(c, switch_scope, switch_samples, happened, sampling, traffic_start_ns,
                              measured, attempt.raw);
      attempt.metrics = measured.values;
      attempt.unmeasured = measured.unmeasured;
      attempt.where = measured.where;
      if (!traffic.timelines.empty()) attempt.raw["timeline"] = std::move(timeline);
    }
    if (traffic.interrupted)
      throw PhaseFailure{{"", "interrupted", "stopped by a signal before the workload ended"}};
    if (traffic.failure) throw PhaseFailure{*traffic.failure};
    const auto summaries = stop_captures(c, captures);
    if (!captures.empty()) attempt.raw["captures"] = captures_json(captures, summaries);
    measured.merge(in_phase("analysis", "", [&] { return capture_metrics(summaries); }));
    std::vector<switches::SwitchDelta> switch_deltas;
    if (c.switch_polling) {
      switch_deltas =
          deltas(switches_before.wait(), in_phase("switches", "", [&] {
                   return c.switch_polling->snapshot_after_traffic(switch_scope, c.interrupt);
                 }));
      attempt.raw["switches"] = switches_json(switch_deltas);
      measured.merge(switch_metrics(*c.inventory, switch_deltas));
    } else {
      measured.merge(switches_not_polled());
    }
    if (const auto cnps = measured.values.find("cnps"); cnps == measured.values.end())
      measured.absent("cnp_per_s",
                      "it needs cnps, which was not measured: " + measured.unmeasured["cnps"]);
    else if (traffic.seconds > 0)
      measured.values["cnp_per_s"] = cnps->second / traffic.seconds;
    else
      measured.absent("cnp_per_s", "the workload reported no measured interval");
    reconcile(c, traffic, nics, mirror_bytes(c, captures, summaries), switch_deltas, measured,
              attempt.raw);
    attempt.metrics = std::move(measured.values);
    attempt.unmeasured = std::move(measured.unmeasured);
    attempt.where = std::move(measured.where);
    attempt.cpu_starved = suites::starvation_reasons(attempt.cpu, attempt.metrics);
  } catch (const PhaseFailure& f) {
    attempt.error = f.error;
    // The files of an attempt that failed are the ones most worth keeping: its captures are
    // stopped, if they still answer, to learn what they wrote.
    if (c.keeping != nullptr && c.keeping->writes() && !captures.empty() &&
        !attempt.raw.contains("captures"))
      try {
        attempt.raw["captures"] = captures_json(captures, stop_captures(c, captures));
      } catch (const PhaseFailure&) {
      }
  }
  if (events && !attempt.raw.contains("fabric_events")) end_events(*events, attempt);
  attempt.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return attempt;  // the links close here: every agent's stdin, so every agent, ends
}

}  // namespace rocehil::run
