// `rocehil traffic collective`: a collective across inventory hosts, one agent per rank reached
// over ssh, swept over sizes and QP counts, printed like nccl-tests.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/run/collective_ranks.hpp"
#include "rocehil/run/collective_run.hpp"
#include "rocehil/run/result_json.hpp"
#include "rocehil/suites/suite.hpp"
#include "rocehil/traffic/qp_scaling.hpp"
#include "shared/interrupt.hpp"
#include "shared/progress.hpp"
#include "traffic/collective_command.hpp"
#include "traffic/collective_text.hpp"

namespace rocehil::cli {

namespace {

struct CollectiveOptions {
  std::string inventory;
  std::string hosts = "all";
  std::string pattern = "allreduce";
  std::vector<std::string> sizes{"1M"};
  std::vector<std::uint32_t> qps{1};
  std::string strategy = "split";
  std::string placement = "packed";
  std::uint64_t iterations = 20;
  std::uint64_t warmup = 5;
  int pipeline = 8;
  std::uint64_t seed = 1;
  std::uint64_t sport_seed = 1;
  std::vector<std::uint16_t> udp_sports;
  std::uint32_t mtu = 1024;
  int tclass = 0;
  bool no_verify = false;
  bool json = false;
  int timeout_s = 30;
};

std::uint64_t parse_size_option(const std::string& text) {
  const auto bytes = suites::parse_size(text);
  if (!bytes)
    throw input_error(
        fmt::format("--sizes: '{}' is not a size (write 65536, 64K, 1M or 1G)", text));
  if (*bytes == 0 || *bytes > (1ull << 30))
    throw input_error(fmt::format("--sizes: {} is outside 1 byte .. 1G", text));
  return *bytes;
}

int run_collective_command(const CollectiveOptions& o) {
  const auto pattern = traffic::pattern_from_name(o.pattern);
  if (!pattern) {
    std::string names;
    for (const auto p : traffic::all_patterns()) {
      if (!names.empty()) names += ", ";
      names += traffic::to_string(p);
    }
    throw input_error(fmt::format("--pattern: unknown pattern '{}' (one of {})", o.pattern, names));
  }
  const auto strategy = traffic::qp_strategy_from_name(o.strategy);
  if (!strategy)
    throw input_error(fmt::format("--strategy: '{}' is not split or round_robin", o.strategy));
  const auto placement = traffic::placement_from_name(o.placement);
  if (!placement)
    throw input_error(fmt::format("--placement: '{}' is not packed or fragmented", o.placement));
  std::vector<std::uint64_t> sizes;
  for (const auto& s : o.sizes) sizes.push_back(parse_size_option(s));

  const inventory::Inventory inv = inventory::load_inventory(o.inventory);
  const auto hosts = inventory::select_hosts(inv, o.hosts);
  const run::CollectiveRanks ranks = run::collective_ranks(
      hosts,
      {.pattern = *pattern, .placement = *placement, .mtu = o.mtu, .traffic_class = o.tclass},
      o.inventory, o.hosts);
  const auto& infos = ranks.infos;
  const auto& setups = ranks.setups;
  const auto& provider = ranks.provider;

  const std::atomic<bool>& interrupted = catch_interrupts();
  std::vector<std::unique_ptr<remote::AgentLink>> agents;
  std::vector<remote::AgentLink*> links;
  for (const auto& c : ranks.commands) {
    agents.push_back(remote::launch_agent(c));
    links.push_back(agents.back().get());
  }
  const auto timeout = std::chrono::seconds(o.timeout_s);
  for (std::size_t r = 0; r < links.size(); ++r)
    links[r]->send(agent::Request{0, agent::HelloRequest{}});
  for (std::size_t r = 0; r < links.size(); ++r) {
    std::optional<agent::Reply> reply =
        links[r]->receive(remote::AgentLink::Clock::now() + timeout);
    const auto* hello = reply ? std::get_if<agent::HelloReply>(&reply->body) : nullptr;
    if (hello == nullptr)
      throw Error(ExitCode::infrastructure,
                  fmt::format("agent on {}: no hello within {} s", links[r]->name(), o.timeout_s));
    if (std::find(hello->workloads.begin(), hello->workloads.end(), "collective") ==
        hello->workloads.end())
      throw Error(ExitCode::infrastructure,
                  fmt::format("agent on {} (rocehil {}) runs no collectives: deploy this "
                              "rocehil there ('rocehil inventory check {} --deploy')",
                              links[r]->name(), hello->version, o.inventory));
  }

  run::CollectiveJob job;
  job.plan = {.pattern = *pattern,
              .ranks = static_cast<int>(links.size()),
              .bytes = 0,
              .ranks_per_host = ranks.ranks_per_host,
              .pipeline = o.pipeline,
              .seed = o.seed};
  job.sport_seed = o.sport_seed;
  job.pinned_sports = o.udp_sports;
  job.warmup_iterations = o.warmup;
  job.iterations = o.iterations;
  job.verify = !o.no_verify;
  job.reply_timeout = timeout;
  if (!o.json) {
    fmt::print("{}", collective_table_header(job, infos, provider, o.placement));
    std::fflush(stdout);
  }
  std::vector<run::CollectiveCase> cases;
  std::string notes;
  for (const std::uint32_t qps : o.qps)
    for (const std::uint64_t bytes : sizes) {
      if (interrupted.load()) break;
      run::CollectiveJob one = job;
      one.plan.bytes = bytes;
      one.scaling = {.qps = qps, .strategy = *strategy};
      if (!o.udp_sports.empty() && o.udp_sports.size() != qps)
        throw input_error(fmt::format("--udp-sports has {} ports for {} qps: give one per QP",
                                      o.udp_sports.size(), qps));
      Progress progress(fmt::format("{} {} B qps {}", o.pattern, bytes, qps), "iterations",
                        o.iterations);
      progress.set_enabled(!o.json);
      cases.push_back(run::run_collective_case(
          links, setups, one, [&](std::uint64_t done, std::uint64_t) { progress.update(done); },
          interrupted));
      progress.update(cases.back().summary.iterations);
      progress.finish();
      if (!o.json) {
        fmt::print("{}", collective_table_row(cases.back()));
        std::fflush(stdout);
      }
      notes += collective_notes(cases.back());
    }
  if (o.json)
    fmt::print("{}\n", run::collective_json(infos, provider, o.placement, cases).dump(2));
  else
    fmt::print("{}", notes);
  if (interrupted.load()) return static_cast<int>(ExitCode::infrastructure);
  return collective_exit_code(cases);
}

}  // namespace

void add_collective_command(CLI::App& traffic, int& exit_code) {
  auto o = std::make_shared<CollectiveOptions>();
  CLI::App* c = traffic.add_subcommand(
      "collective",
      "Run a collective (ring allreduce, alltoall, ...) across inventory hosts, one agent per "
      "NIC over ssh, and print nccl-tests' table: time, algbw, busbw, plus p50/p99, CV and a "
      "data check on every rank.");
  c->add_option("inventory", o->inventory, "The inventory file (see docs/inventory.md)")
      ->required();
  c->add_option("--hosts", o->hosts,
                "Which hosts: a selection such as 'all', 'rack:r1', 'h[1-4]', 'all@8/rack'; "
                "every NIC of a selected host is a rank");
  c->add_option("--pattern", o->pattern,
                "allreduce, allgather, reduce_scatter, alltoall, broadcast, tree_allreduce, "
                "hierarchical_allreduce, incast, permutation or pairwise");
  c->add_option("--sizes", o->sizes, "Message sizes per rank, as nccl-tests counts them: 64K,1M")
      ->delimiter(',');
  c->add_option("--qps", o->qps,
                "QPs per connection, a list to sweep: 1,4,8 (up to 16384; a rank's peers x qps "
                "at most 16384)")
      ->delimiter(',')
      ->check(CLI::Range(1u, traffic::max_qps_per_connection));
  c->add_option("--strategy", o->strategy,
                "QP scaling: split (every message over all QPs) or round_robin (whole messages "
                "take turns)");
  c->add_option("--placement", o->placement,
                "Rank order: packed (rack by rack) or fragmented (hosts dealt across racks)");
  c->add_option("--iterations", o->iterations, "Measured iterations")->check(CLI::Range(1, 40000));
  c->add_option("--warmup", o->warmup, "Iterations before measuring")->check(CLI::Range(0, 100000));
  c->add_option("--pipeline", o->pipeline, "broadcast, tree_allreduce: pieces per message")
      ->check(CLI::Range(1, 1024));
  c->add_option("--seed", o->seed, "permutation: which one");
  c->add_option("--sport-seed", o->sport_seed,
                "Seed of the per-QP UDP source ports (ECMP entropy): the same seed, the same "
                "paths");
  c->add_option("--udp-sports", o->udp_sports,
                "Pin the UDP source ports instead, one per QP of a connection: 49152,49153")
      ->delimiter(',');
  c->add_option("--mtu", o->mtu, "Path MTU: 256, 512, 1024, 2048 or 4096");
  c->add_option("--tclass", o->tclass, "IP traffic class byte (DSCP << 2 | ECN)")
      ->check(CLI::Range(0, 255));
  c->add_flag("--no-verify", o->no_verify,
              "Skip the data check (an iteration whose every rank's output CRC is compared with "
              "the one it must have)");
  c->add_option("--timeout", o->timeout_s, "Seconds an agent may stay silent")
      ->check(CLI::Range(1, 3600));
  c->add_flag("--json", o->json, "Print JSON (schema_version 1) instead of the table");
  c->footer(R"(
Examples:
  rocehil traffic collective /tmp/tb/inventory.yaml --sizes 64K,1M,16M
  rocehil traffic collective fabric.yaml --hosts 'rack:r1,rack:r2' --pattern alltoall --qps 1,8
  rocehil traffic collective fabric.yaml --pattern pairwise --sizes 4M    (find a bad link)
  rocehil traffic collective fabric.yaml --hosts h1,h2 --qps 4096    (4K QPs a connection)
QPs: a rank has its peers x --qps of them, at most 16384 (a ring rank has 2 peers, 1 with two
ranks; alltoall n-1); a case with more is refused before setup, saying what --qps fits.
Columns as nccl-tests: time is the mean per iteration (an iteration ends when its last rank is
done), algbw = size / time, busbw = algbw x the pattern's factor (allreduce 2(n-1)/n; allgather,
reduce_scatter, alltoall (n-1)/n). Compare busbw with the link speed.
Exit status: 0 clean, 1 transport errors or wrong data, 2 bad options or inventory, 3 an agent
died, timed out or Ctrl-C.)");
  c->callback([o, &exit_code] { exit_code = run_collective_command(*o); });
}

}  // namespace rocehil::cli
