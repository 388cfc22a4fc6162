// `rocehil bisect`: binary search over ordered candidates (firmware versions, DCQCN or PFC
// settings, link rates) for the first one that makes the suite fail. Each step applies a
// candidate with the user's command, runs the suite, and is recorded in the run history before
// the next, so a bisection that is killed resumes where it stopped when started again.
#include "rocehil/harness/bisect_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "interrupt.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/harness/agent_link.hpp"
#include "rocehil/harness/remote_run.hpp"
#include "rocehil/harness/suite_run.hpp"
#include "rocehil/reports/bisection.hpp"
#include "rocehil/reports/history.hpp"
#include "rocehil/reports/run_directory.hpp"
#include "rocehil/reports/settings.hpp"

namespace rocehil::harness {

namespace {

// Set by SIGINT or SIGTERM (catch_interrupts, in the command's callback).
const std::atomic<bool>* interrupted = nullptr;

struct Options {
  SuiteRunOptions run;
  std::string candidates_file;
  std::string apply;
  int apply_timeout_s = 600;
  int timeout_s = 30;
  bool restart = false;
  bool json = false;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(fmt::format("{}: cannot read the {} (check the path)", path, what));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The user's command with every {candidate} replaced by the candidate, quoted for sh: a
// candidate is data, never shell syntax.
std::string apply_command(const std::string& pattern, const std::string& candidate) {
  static constexpr std::string_view placeholder = "{candidate}";
  std::string out;
  std::size_t from = 0;
  for (auto at = pattern.find(placeholder); at != std::string::npos;
       at = pattern.find(placeholder, from)) {
    out += pattern.substr(from, at - from);
    out += shell_quote(candidate);
    from = at + placeholder.size();
  }
  return out + pattern.substr(from);
}

struct Step {
  std::size_t index = 0;
  std::string candidate, run_id;
  int exit_code = 0;
};

class BisectRun {
 public:
  explicit BisectRun(const Options& o) : o_(o) {
    candidates_ = reports::parse_candidates(read_file(o.candidates_file, "candidates file"),
                                            o.candidates_file);
    if (o.apply.find("{candidate}") == std::string::npos)
      throw input_error(
          fmt::format("--apply '{}' has no {{candidate}}: say where the candidate "
                      "goes, e.g. --apply 'fwupdate --version {{candidate}}'",
                      o.apply));
    // What defines the search names it: the same command resumes it; any change starts anew.
    id_ = reports::content_hash(fmt::format("{}\n\x1f{}\n\x1f{}\n\x1f{}\n\x1f{}",
                                            read_file(o.run.suite_file, "suite"),
                                            read_file(o.run.inventory_file, "inventory"),
                                            fmt::join(candidates_, "\n"), o.apply, o.run.only));
    history_path_ =
        o.run.history_file.empty() ? o.run.reports_dir + "/history.db" : o.run.history_file;
  }

  int go() {
    std::error_code ec;
    std::filesystem::create_directories(o_.run.reports_dir, ec);
    if (ec)
      throw input_error(fmt::format("cannot make the reports directory {}: {} (give --reports)",
                                    o_.run.reports_dir, ec.message()));
    auto history = reports::History::open(history_path_);
    if (o_.restart) history.forget_bisect(id_);
    history.begin_bisect({.id = id_,
                          .suite_file = o_.run.suite_file,
                          .candidates = candidates_,
                          .apply = o_.apply,
                          .started_at = reports::iso_utc(std::time(nullptr)),
                          .finished_at = {},
                          .first_bad = {}});
    reports::Bisection search{.candidates = candidates_.size(), .is_bad = {}};
    const auto done = history.bisect_steps(id_);
    for (const auto& s : done) search.is_bad[s.index] = s.bad;
    say(fmt::format(
        "rocehil bisect {}: {} candidates, '{}' known good, '{}' known bad: at most {} "
        "run(s){}\n",
        id_, candidates_.size(), candidates_.front(), candidates_.back(),
        reports::Bisection::runs_needed(candidates_.size()),
        done.empty() ? "" : fmt::format("; resuming after {} recorded step(s)", done.size())));
    for (const auto& s : done)
      say(fmt::format("  step {} (recorded): '{}' {} (run {})\n", s.step, s.candidate,
                      s.bad ? "bad" : "good", s.run_id));
    int step = done.empty() ? 0 : done.back().step;
    while (const auto next = search.next(candidates_)) {
      if (interrupted->load()) return stopped("interrupted");
      const Step result = run_candidate(*next, ++step);
      // A run cut short by the signal says nothing of its candidate: it is not recorded.
      if (interrupted->load())
        return stopped(
            fmt::format("interrupted during the run of '{}'; run the same command again to resume",
                        result.candidate));
      if (result.exit_code != 0 && result.exit_code != 1)
        return stopped(fmt::format(
            "the run of '{}' could not measure (exit {}; see run {}); fix the fabric or hosts and "
            "run the same command again to resume",
            result.candidate, result.exit_code, result.run_id.empty() ? "-" : result.run_id));
      const bool bad = result.exit_code == 1;
      history.record_bisect_step(id_, {.step = step,
                                       .index = result.index,
                                       .candidate = result.candidate,
                                       .run_id = result.run_id,
                                       .bad = bad});
      search.is_bad[result.index] = bad;
      say(fmt::format("  step {}: '{}' {} (run {})\n", step, result.candidate, bad ? "bad" : "good",
                      result.run_id));
    }
    const auto range = search.range(candidates_);
    const std::string& first_bad = candidates_[range.first_bad];
    history.finish_bisect(id_, first_bad, reports::iso_utc(std::time(nullptr)));
    const auto steps = history.bisect_steps(id_);
    if (o_.json) {
      nlohmann::ordered_json j{{"schema_version", 1},
                               {"bisect_id", id_},
                               {"history", history_path_},
                               {"first_bad", first_bad},
                               {"last_good", candidates_[range.last_good]},
                               {"runs", steps.size()}};
      j["steps"] = nlohmann::ordered_json::array();
      for (const auto& s : steps)
        j["steps"].push_back({{"step", s.step},
                              {"candidate", s.candidate},
                              {"run_id", s.run_id},
                              {"verdict", s.bad ? "bad" : "good"}});
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("first bad: '{}' (last good: '{}'), {} run(s); steps in {}\n", first_bad,
                 candidates_[range.last_good], steps.size(), history_path_);
    }
    return 0;
  }

 private:
  Step run_candidate(std::size_t index, int step) {
    Step s{.index = index, .candidate = candidates_[index], .run_id = {}, .exit_code = 0};
    const std::string command = apply_command(o_.apply, s.candidate);
    say(fmt::format("  step {}: applying '{}': {}\n", step, s.candidate, command));
    const CommandResult applied =
        run_command({"sh", "-c", command}, {.timeout = std::chrono::seconds(o_.apply_timeout_s),
                                            .max_output = 1 << 20,
                                            .stdin_file = {}});
    if (!applied.succeeded())
      throw Error(ExitCode::infrastructure,
                  fmt::format("bisect: --apply for '{}' failed ({}); nothing was run for it. Run "
                              "the same command again to resume",
                              s.candidate, applied.reason()));
    SuiteRunOptions run = o_.run;
    run.json = false;
    run.quiet = o_.json;  // the bisection's JSON is the only thing on stdout
    run.command_line =
        fmt::format("rocehil bisect ... (step {}, candidate {})", step, shell_quote(s.candidate));
    s.exit_code = run_suite(run, *interrupted, &s.run_id);
    return s;
  }

  int stopped(const std::string& why) {
    fmt::print(stderr, "rocehil bisect: stopped: {}\n", why);
    return static_cast<int>(ExitCode::infrastructure);
  }

  void say(const std::string& text) const {
    if (!o_.json) fmt::print("{}", text);
    std::fflush(stdout);
  }

  const Options& o_;
  std::vector<std::string> candidates_;
  std::string id_;
  std::string history_path_;
};

}  // namespace

void add_bisect_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "bisect",
      "Find the first bad candidate (firmware version, DCQCN or PFC setting, link rate) of an "
      "ordered list: apply one with your command, run the suite, halve the range, repeat.");
  cmd->add_option("--suite,-s", o->run.suite_file, "The suite to run at each step")->required();
  cmd->add_option("--inventory,-i", o->run.inventory_file, "The inventory file")->required();
  cmd->add_option("--candidates", o->candidates_file,
                  "One candidate per line, in order: the first known good, the last known bad "
                  "('#' comments)")
      ->required();
  cmd->add_option("--apply", o->apply,
                  "The command that puts a candidate in place, run with sh; {candidate} is "
                  "replaced by the candidate, quoted")
      ->required();
  cmd->add_option("--only", o->run.only, "Run only these cases of the suite (a glob)");
  cmd->add_option("--reports", o->run.reports_dir, "Where run directories go")
      ->capture_default_str();
  cmd->add_option("--history", o->run.history_file,
                  "The run history (default <reports>/history.db): runs and bisection steps");
  cmd->add_option("--apply-timeout", o->apply_timeout_s, "Seconds --apply may take")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "As rocehil run's --timeout")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_flag("--restart", o->restart,
                "Forget the recorded steps of this same bisection and start it again");
  cmd->add_flag("--json", o->json, "Print the result as JSON (schema_version 1)");
  cmd->footer(R"(
Examples:
  rocehil bisect -s nightly.yaml -i fabric.yaml --candidates fw.txt \
      --apply 'ansible-playbook flash.yml -e version={candidate}'
  rocehil bisect -s suites/smoke.yaml -i /tmp/tb/inventory.yaml --only 'p2p_bw' \
      --candidates rates.txt --apply 'ip netns exec rocehil-tb-h1 tc qdisc change dev tb-nic0 root tbf rate {candidate}mbit burst 50000 latency 5ms'

A candidate is good when the suite's run exits 0 and bad when it exits 1 (a threshold failed);
give tests 'repeats' when one run can be noisy. Runs take ceil(log2(candidates - 1)). Every run
and every step's verdict go to the run history as they happen: when a bisection is killed, run
the same command again and it goes on from the recorded steps ('--restart' begins anew). A run
that cannot measure (exit 3) stops the bisection, so a broken host is not taken for a bad
candidate. Exit status: 0 found, 2 bad input, 3 --apply or a run failed, or interrupted.)");
  cmd->callback([o, &exit_code] {
    interrupted = &catch_interrupts();
    o->run.timeout = std::chrono::seconds(o->timeout_s);
    exit_code = BisectRun(*o).go();
  });
}

}  // namespace rocehil::harness
