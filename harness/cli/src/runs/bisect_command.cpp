// `rocehil bisect`: the command line of run::run_bisect (rocehil/run/bisect.hpp).
#include "runs/bisect_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "fabric/testbed_links.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/run/bisect.hpp"
#include "runs/host_options.hpp"
#include "runs/run_printer.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

namespace {

struct BisectOptions {
  run::BisectOptions bisect;
  HostFlags hosts;
  int timeout_s = 30;
  bool json = false;
};

// Each step on a line; with --json nothing until the result, and the steps' runs say nothing.
class BisectPrinter final : public run::BisectEvents {
 public:
  explicit BisectPrinter(bool json)
      : json_(json), runs_(json ? RunPrinter::Stdout::quiet : RunPrinter::Stdout::text) {}

  void bisect_started(const Start& s) override {
    say(fmt::format(
        "rocehil bisect {}: {} candidates, '{}' known good, '{}' known bad: at most {} "
        "run(s){}\n",
        s.id, s.candidates.size(), s.candidates.front(), s.candidates.back(), s.runs_needed,
        s.recorded.empty()
            ? ""
            : fmt::format("; resuming after {} recorded step(s)", s.recorded.size())));
    for (const auto& r : s.recorded)
      say(fmt::format("  step {} (recorded): '{}' {} (run {})\n", r.step, r.candidate,
                      r.bad ? "bad" : "good", r.run_id));
  }
  void applying(int step, const std::string& candidate, const std::string& command) override {
    say(fmt::format("  step {}: applying '{}': {}\n", step, candidate, command));
  }
  void step_decided(const reports::History::BisectStep& s) override {
    say(fmt::format("  step {}: '{}' {} (run {})\n", s.step, s.candidate, s.bad ? "bad" : "good",
                    s.run_id));
  }
  run::RunEvents& run_events() override { return runs_; }

 private:
  void say(const std::string& text) const {
    if (json_) return;
    fmt::print("{}", text);
    std::fflush(stdout);
  }

  bool json_;
  RunPrinter runs_;
};

int print_outcome(const run::BisectOutcome& b, bool json) {
  if (!b.stopped.empty()) {
    fmt::print(stderr, "rocehil bisect: stopped: {}\n", b.stopped);
    return static_cast<int>(ExitCode::infrastructure);
  }
  if (json) {
    nlohmann::ordered_json j{{"schema_version", 1},      {"bisect_id", b.id},
                             {"history", b.history},     {"first_bad", b.first_bad},
                             {"last_good", b.last_good}, {"runs", b.steps.size()}};
    j["steps"] = nlohmann::ordered_json::array();
    for (const auto& s : b.steps)
      j["steps"].push_back({{"step", s.step},
                            {"candidate", s.candidate},
                            {"run_id", s.run_id},
                            {"verdict", s.bad ? "bad" : "good"}});
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("first bad: '{}' (last good: '{}'), {} run(s); steps in {}\n", b.first_bad,
               b.last_good, b.steps.size(), b.history);
  }
  return 0;
}

}  // namespace

void add_bisect_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<BisectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bisect",
      "Find the first bad candidate (firmware version, DCQCN or PFC setting, link rate) of an "
      "ordered list: apply one (as a fabric setting with --set, or with your command), run the "
      "suite, halve the range, repeat.");
  cmd->add_option("--suite,-s", o->bisect.run.suite_file, "The suite to run at each step")
      ->required();
  cmd->add_option("--inventory,-i", o->bisect.run.inventory_file, "The inventory file")->required();
  cmd->add_option("--candidates", o->bisect.candidates_file,
                  "One candidate per line, in order: the first known good, the last known bad "
                  "('#' comments)")
      ->required();
  cmd->add_option("--set", o->bisect.set,
                  "The candidate is a fabric setting's value (rocehil settings list): set on every "
                  "host the suite uses (or the testbed's switches) for the step's run, read back, "
                  "recorded in its run.json and put back after it")
      ->type_name("KEY={candidate}");
  cmd->add_option("--apply", o->bisect.apply,
                  "The command that puts a candidate in place, run with sh; {candidate} is "
                  "replaced by the candidate, quoted (firmware: the site's flashing command)");
  cmd->add_option("--only", o->bisect.run.only, "Run only these cases of the suite (a glob)");
  add_host_options(cmd, o->hosts);
  cmd->add_option("--reports", o->bisect.run.reports_dir, "Where run directories go")
      ->capture_default_str();
  cmd->add_option("--history", o->bisect.run.history_file,
                  "The run history (default <reports>/history.db): runs and bisection steps");
  cmd->add_option("--apply-timeout", o->bisect.apply_timeout_s, "Seconds --apply may take")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "As rocehil run's --timeout")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--restart", o->bisect.restart,
                "Forget the recorded steps of this same bisection and start it again");
  cmd->add_flag("--json", o->json, "Print the result as JSON (schema_version 1)");
  cmd->footer(R"(
Examples:
  rocehil bisect -s nightly.yaml -i fabric.yaml --candidates gd.txt --set roce_rp.rpg_gd={candidate}
  rocehil bisect -s suites/smoke.yaml -i /tmp/tb/inventory.yaml --only 'incast*' \
      --candidates marks.txt --set switch.ecn_mark_mbps={candidate}
  rocehil bisect -s nightly.yaml -i fabric.yaml --candidates fw.txt \
      --apply 'ansible-playbook flash.yml -e version={candidate}'
  salloc -N 8 rocehil bisect -s nightly.yaml -i fabric.yaml --hosts slurm --launcher slurm ...
  rocehil bisect -s suites/smoke.yaml -i /tmp/tb/inventory.yaml --only 'p2p_bw' \
      --candidates rates.txt --apply 'ip netns exec rocehil-tb-h1 tc qdisc change dev tb-nic0 root tbf rate {candidate}mbit burst 50000 latency 5ms'

A candidate is good when the suite's run exits 0 and bad when it exits 1 (a threshold failed);
give tests 'repeats' when one run can be noisy. Runs take ceil(log2(candidates - 1)). Every run
and every step's verdict go to the run history as they happen: when a bisection is killed, run
the same command again and it goes on from the recorded steps ('--restart' begins anew). A run
that cannot measure (exit 3) stops the bisection, so a broken host is not taken for a bad
candidate. With --set every candidate is checked a value the setting takes before the first run,
and the fabric's settings after the bisection (finished or killed and resumed) are those before
it. After a firmware change (--apply) NIC counters that went backwards are reported as reset,
never as deltas.
Exit status: 0 found, 2 bad input, 3 --apply or a run failed, or interrupted.)");
  cmd->callback([o, &exit_code] {
    o->bisect.run.timeout = std::chrono::seconds(o->timeout_s);
    apply_host_flags(o->hosts, o->bisect.run);
    o->bisect.run.fabric_links = testbed_links_for(o->bisect.run.inventory_file);
    BisectPrinter printer(o->json);
    exit_code = print_outcome(run::run_bisect(o->bisect, catch_interrupts(), printer), o->json);
  });
}

}  // namespace rocehil::cli
