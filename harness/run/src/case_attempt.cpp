#include "case_attempt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <thread>
#include <tuple>

#include "agent_conversation.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"
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
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::run {

namespace {

using Clock = std::chrono::steady_clock;

// Agents end together when a phase is over, however it ends: every input closed, then each
// waited for.
struct AgentsClosedOnExit {
  std::vector<std::unique_ptr<remote::AgentLink>>& agents;
  ~AgentsClosedOnExit() { remote::close_all(agents); }
};

std::int64_t unix_ns_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A phase that failed: the attempt records where, and the phases after it do not run.
struct PhaseFailure {
  reports::AttemptError error;
};

template <typename Fn>
auto in_phase(std::string_view phase, const std::string& host, Fn&& fn) {
  try {
    return fn();
  } catch (const PhaseFailure&) {
    throw;
  } catch (const std::exception& e) {
    const std::string message = e.what();
    throw PhaseFailure{{host.empty() ? host_named_in(message) : host, std::string(phase), message}};
  }
}

bool is_collective(const suites::SuiteTest& test) {
  return !suites::is_point_to_point(test);
}

RankSettings rank_settings(const CaseContext& c) {
  const auto& tc = *c.test_case;
  return {.pattern = traffic::pattern_from_name(c.test->workload).value(),
          .placement = traffic::placement_from_name(tc.placement).value(),
          .provider = c.test->settings.provider,
          .mtu = 1024,
          .traffic_class = tc.traffic_class,
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
      remote::AgentCommand command =
          remote::host_command(*host, {host->agent, "agent"}, c.multiplex);
      command.name = host->name;
      running.push_back({name, host->name, remote::launch_agent(command)});
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
      const auto& d = point->mirrors.direction;
      start.direction = d == "spine-to-leaf" || d == "leaf-to-spine" ? d : "unknown";
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
                   {"coverage", s.coverage},
                   {"analysis", analysis}});
  }
  return out;
}

// ---- the injection, on its own thread beside the traffic ----

class InjectionRun {
 public:
  InjectionRun(InjectionCommand command, double after_s, double duration_s,
               const std::atomic<bool>& interrupt)
      : command_(std::move(command)) {
    thread_ = std::thread([this, after_s, duration_s, &interrupt] {
      const auto start = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(after_s));
      while (Clock::now() < start && !interrupt.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (interrupt.load()) return;
      const auto limit = std::chrono::milliseconds(30000 + static_cast<long>(duration_s * 1000));
      result_ = remote::run_command(command_.command.argv, {.timeout = limit});
    });
  }
  ~InjectionRun() { wait(); }
  void wait() {
    if (thread_.joinable()) thread_.join();
  }
  const remote::CommandResult& result() const { return result_; }
  const InjectionCommand& command() const { return command_; }

 private:
  InjectionCommand command_;
  remote::CommandResult result_;
  std::thread thread_;
};

// ---- the workloads ----

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

struct TrafficOutcome {
  suites::Measured metrics;
  std::vector<HostNic> nics;  // what each host's NIC counted
  std::vector<std::string> hosts;
  std::vector<CnpsSent> cnps_sent;  // for cnp_reconciliation
  std::string cnps_unknown;         // why cnps_sent could not be told
  nlohmann::json raw;
  double seconds = 0;  // the measured interval
  bool interrupted = false;
  std::optional<reports::AttemptError> failure;  // measured nothing that stands, and why
};

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
        agents.push_back(remote::launch_agent(ranks.commands[r]));
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
  job.reply_timeout = c.timeout;
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
    out.failure = reports::AttemptError{
        suspect >= 0 ? ranks.hosts[static_cast<std::size_t>(suspect)] : "", "traffic",
        fmt::format("{} transport error(s), the first {}{}", result.errors, result.first_error,
                    blame)};
  }
  return out;
}

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
  return s;
}

// The agent of one side of a point-to-point case; a failure to start it is the host's.
std::unique_ptr<remote::AgentLink> launch_on(const CaseContext& c, const inventory::Host& host) {
  return in_phase("launch", host.name, [&] {
    return remote::launch_agent(remote::host_command(host, {host.agent, "agent"}, c.multiplex));
  });
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
  else  // perftest takes whole seconds
    p.seconds = static_cast<std::uint32_t>(std::max(1.0, std::ceil(settings.duration_s)));
  p.traffic_class = c.test_case->traffic_class;
  if (settings.transport == "ud") p.transport = traffic::QpType::ud;
  return p;
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
  const double planned = c.test->workload == "lat" ? 0 : config.client.seconds;
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
  if (result.client.results && result.client.results->report)
    out.seconds = static_cast<double>(config.client.seconds);
  out.interrupted = result.interrupted;
  if (const auto failure = perftest_failure(result))
    out.failure = reports::AttemptError{
        failure->side == agents[1]->name() ? server_host.name : client_host.name, "perftest",
        failure->message};
  return out;
}

TrafficOutcome run_point_to_point_case(const CaseContext& c) {
  if (c.test->settings.engine == "perftest") return run_perftest_case(c);
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
  } else {
    config.start.seconds = settings.duration_s;
  }
  config.reply_timeout = c.timeout;
  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  const AgentsClosedOnExit closer{agents};
  agents.push_back(launch_on(c, client_host));
  agents.push_back(launch_on(c, server_host));
  remote::AgentLink& client = *agents[0];
  remote::AgentLink& server = *agents[1];
  const double planned = c.test->workload == "lat" ? 0 : settings.duration_s;
  const PointToPointResult result = in_phase("traffic", "", [&] {
    return run_point_to_point(
        client, server, config,
        [&](const agent::StatsEvent& stats) {
          if (c.on_progress && planned > 0) c.on_progress(std::min(1.0, stats.t_s / planned));
        },
        *c.interrupt);
  });
  TrafficOutcome out;
  out.metrics = point_to_point_metrics(result, config.client.provider);
  for (const auto& d : result.client.results.nics) out.nics.push_back({client_host.name, d});
  for (const auto& d : result.server.results.nics) out.nics.push_back({server_host.name, d});
  out.hosts = {client_host.name, server_host.name};
  for (const auto& [side, host, peer] :
       {std::tuple{&result.client, client_host.name, server_host.name},
        std::tuple{&result.server, server_host.name, client_host.name}})
    if (out.cnps_unknown.empty())
      add_cnps_sent(side->results, host,
                    std::vector<std::string>(side->results.per_qp.size(), peer), out.cnps_sent,
                    out.cnps_unknown);
  out.raw = point_to_point_json(config, result);
  out.seconds = result.client.results.seconds;
  out.interrupted = result.interrupted;
  return out;
}

// The pause frames one host's NIC counted on all priorities, or nothing when it lacks one.
std::optional<double> pause_frames(const std::vector<HostNic>& nics, const std::string& host,
                                   const char* direction) {
  for (const HostNic& n : nics) {
    if (n.host != host) continue;
    double sum = 0;
    for (int p = 0; p < 8; ++p) {
      const auto it = n.delta.deltas.find(fmt::format("ethtool/{}_prio{}_pause", direction, p));
      if (it == n.delta.deltas.end()) return std::nullopt;
      sum += static_cast<double>(it->second);
    }
    return sum;
  }
  return std::nullopt;
}

// cnp_reconciliation and pfc_reconciliation, with both sides kept in raw.reconciliation.
void reconcile(const CaseContext& c, const TrafficOutcome& traffic,
               const std::vector<HostNic>& nics, suites::Measured& measured, nlohmann::json& raw) {
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
  measured.merge(cnp.measured);
  measured.merge(pfc.measured);
  raw["reconciliation"] = {{"cnp", cnp.to_json()}, {"pfc", pfc.to_json()}};
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

reports::Attempt run_case_attempt(const CaseContext& c) {
  reports::Attempt attempt;
  attempt.start_ns = unix_ns_now();
  const auto started = Clock::now();
  std::vector<RunningCapture> captures;
  std::unique_ptr<InjectionRun> injection;
  try {
    captures = start_captures(c);
    if (c.test->inject) {
      InjectionCommand command = in_phase("inject", c.test->inject->from, [&] {
        return injection_command(*c.test->inject, *c.inventory, c.suite->file, c.self, c.multiplex);
      });
      injection = std::make_unique<InjectionRun>(std::move(command), c.test->inject->after_s,
                                                 c.test->inject->duration_s, *c.interrupt);
    }
    TrafficOutcome traffic =
        is_collective(*c.test) ? run_collective(c) : run_point_to_point_case(c);
    suites::Measured measured = std::move(traffic.metrics);
    const std::vector<HostNic> nics = distinct_nics(std::move(traffic.nics));
    measured.merge(nic_metrics(nics));
    attempt.raw["nics"] = nics_json(nics);
    attempt.metrics = measured.values;  // kept should a later phase fail
    attempt.unmeasured = measured.unmeasured;
    attempt.raw["traffic"] = std::move(traffic.raw);
    if (traffic.interrupted)
      throw PhaseFailure{{"", "interrupted", "stopped by a signal before the workload ended"}};
    if (traffic.failure) throw PhaseFailure{*traffic.failure};
    if (injection) {
      injection->wait();
      const remote::CommandResult& r = injection->result();
      attempt.raw["inject"] = {{"from", injection->command().from},
                               {"iface", injection->command().iface},
                               {"exit_code", r.exit_code},
                               {"output", r.out}};
      if (!r.succeeded() && !c.interrupt->load())
        throw PhaseFailure{
            {injection->command().from, "inject",
             fmt::format("'rocehil inject' on {} ({}) failed: {}", injection->command().from,
                         injection->command().iface, r.reason())}};
    }
    const auto summaries = stop_captures(c, captures);
    if (!captures.empty()) attempt.raw["captures"] = captures_json(captures, summaries);
    measured.merge(in_phase("analysis", "", [&] { return capture_metrics(summaries); }));
    if (const auto cnps = measured.values.find("cnps"); cnps == measured.values.end())
      measured.absent("cnp_per_s",
                      "it needs cnps, which was not measured: " + measured.unmeasured["cnps"]);
    else if (traffic.seconds > 0)
      measured.values["cnp_per_s"] = cnps->second / traffic.seconds;
    else
      measured.absent("cnp_per_s", "the workload reported no measured interval");
    reconcile(c, traffic, nics, measured, attempt.raw);
    attempt.metrics = std::move(measured.values);
    attempt.unmeasured = std::move(measured.unmeasured);
  } catch (const PhaseFailure& f) {
    attempt.error = f.error;
  }
  if (injection) injection->wait();
  attempt.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return attempt;  // the links close here: every agent's stdin, so every agent, ends
}

}  // namespace rocehil::run
