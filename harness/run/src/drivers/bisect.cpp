#include "rocehil/run/bisect.hpp"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include "basics/read_file.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/reports/bisection.hpp"
#include "rocehil/reports/run_directory.hpp"
#include "rocehil/reports/settings.hpp"
#include "rocehil/settings/assignment.hpp"

namespace rocehil::run {

namespace {

using Step = reports::History::BisectStep;

class Bisect {
 public:
  Bisect(const BisectOptions& o, const std::atomic<bool>& interrupt, BisectEvents& events)
      : o_(o), interrupt_(interrupt), events_(events) {
    candidates_ = reports::parse_candidates(read_file(o.candidates_file, "candidates file"),
                                            o.candidates_file);
    if (o.apply.empty() && o.set.empty())
      throw input_error(
          "bisect: say how a candidate is applied: --set KEY={candidate} for a fabric setting "
          "(rocehil settings list), or --apply 'CMD {candidate}' for anything else (firmware)");
    if (!o.apply.empty() && o.apply.find("{candidate}") == std::string::npos)
      throw input_error(
          fmt::format("--apply '{}' has no {{candidate}}: say where the candidate "
                      "goes, e.g. --apply 'fwupdate --version {{candidate}}'",
                      o.apply));
    if (!o.set.empty()) check_set();
    // What defines the search names it: the same command resumes it; any change starts anew.
    // (--set joins the definition only when given, so that earlier --apply searches resume.)
    out_.id = reports::content_hash(
        fmt::format("{}\n\x1f{}\n\x1f{}\n\x1f{}\n\x1f{}{}", read_file(o.run.suite_file, "suite"),
                    read_file(o.run.inventory_file, "inventory"), fmt::join(candidates_, "\n"),
                    o.apply, o.run.only, o.set.empty() ? std::string() : "\n\x1f--set " + o.set));
    out_.history =
        o.run.history_file.empty() ? o.run.reports_dir + "/history.db" : o.run.history_file;
  }

  BisectOutcome go() {
    std::error_code ec;
    std::filesystem::create_directories(o_.run.reports_dir, ec);
    if (ec)
      throw input_error(fmt::format("cannot make the reports directory {}: {} (give --reports)",
                                    o_.run.reports_dir, ec.message()));
    auto history = reports::History::open(out_.history);
    if (o_.restart) history.forget_bisect(out_.id);
    history.begin_bisect({.id = out_.id,
                          .suite_file = o_.run.suite_file,
                          .candidates = candidates_,
                          .apply = o_.apply,
                          .started_at = reports::iso_utc(std::time(nullptr)),
                          .finished_at = {},
                          .first_bad = {}});
    reports::Bisection search{.candidates = candidates_.size(), .is_bad = {}};
    const auto done = history.bisect_steps(out_.id);
    for (const auto& s : done) search.is_bad[s.index] = s.bad;
    events_.bisect_started({.id = out_.id,
                            .candidates = candidates_,
                            .runs_needed = reports::Bisection::runs_needed(candidates_.size()),
                            .recorded = done});
    int step = done.empty() ? 0 : done.back().step;
    while (const auto next = search.next(candidates_)) {
      if (interrupt_.load()) return stopped("interrupted");
      int exit_code = 0;
      const Step result = run_candidate(*next, ++step, exit_code);
      // A run cut short by the signal says nothing of its candidate: it is not recorded.
      if (interrupt_.load())
        return stopped(
            fmt::format("interrupted during the run of '{}'; run the same command again to resume",
                        result.candidate));
      if (exit_code != 0 && exit_code != 1)
        return stopped(
            fmt::format("the run of '{}' could not measure (exit {}; see run {}); fix the fabric "
                        "or hosts and run the same command again to resume",
                        result.candidate, exit_code, result.run_id.empty() ? "-" : result.run_id));
      history.record_bisect_step(out_.id, result);
      search.is_bad[result.index] = result.bad;
      events_.step_decided(result);
    }
    const auto range = search.range(candidates_);
    out_.first_bad = candidates_[range.first_bad];
    out_.last_good = candidates_[range.last_good];
    history.finish_bisect(out_.id, out_.first_bad, reports::iso_utc(std::time(nullptr)));
    out_.steps = history.bisect_steps(out_.id);
    return out_;
  }

 private:
  // --set KEY={candidate}: a known setting, and every candidate a value it takes, before
  // anything is run.
  void check_set() {
    const auto eq = o_.set.find('=');
    if (eq == std::string::npos || o_.set.substr(eq + 1) != "{candidate}")
      throw input_error(fmt::format(
          "--set '{}' must be KEY={{candidate}}, e.g. --set switch.ecn_mark_mbps={{candidate}}",
          o_.set));
    set_key_ = o_.set.substr(0, eq);
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      (void)settings::assign(set_key_, candidates_[i],
                             fmt::format("{} line {}", o_.candidates_file, i + 1));
  }

  Step run_candidate(std::size_t index, int step, int& exit_code) {
    Step s{
        .step = step, .index = index, .candidate = candidates_[index], .run_id = {}, .bad = false};
    SuiteRunOptions run = o_.run;
    run.started_as = reports::RunKind::bisect;  // never a baseline or a trend's point
    if (!o_.apply.empty()) {
      const std::string command = apply_command(o_.apply, s.candidate);
      events_.applying(step, s.candidate, command);
      const remote::CommandResult applied = remote::run_command(
          {"sh", "-c", command}, {.timeout = std::chrono::seconds(o_.apply_timeout_s),
                                  .max_output = 1 << 20,
                                  .stdin_file = {}});
      if (!applied.succeeded())
        throw Error(ExitCode::infrastructure,
                    fmt::format("bisect: --apply for '{}' failed ({}); nothing was run for it. "
                                "Run the same command again to resume",
                                s.candidate, applied.reason()));
    }
    if (!set_key_.empty()) {
      // The step's run sets it, reads it back, records it in its run.json and puts it back.
      events_.applying(step, s.candidate, fmt::format("--set {}={}", set_key_, s.candidate));
      run.settings =
          settings::merge(run.settings, {settings::assign(set_key_, s.candidate, "bisect --set")});
    }
    run.command_line = fmt::format("rocehil bisect ... (step {}, candidate {})", step,
                                   remote::shell_quote(s.candidate));
    exit_code = run_suite(run, interrupt_, events_.run_events(), &s.run_id);
    s.bad = exit_code == 1;
    return s;
  }

  BisectOutcome stopped(std::string why) {
    out_.stopped = std::move(why);
    return out_;
  }

  const BisectOptions& o_;
  const std::atomic<bool>& interrupt_;
  BisectEvents& events_;
  std::vector<std::string> candidates_;
  std::string set_key_;  // --set's KEY; empty without --set
  BisectOutcome out_;
};

}  // namespace

std::string apply_command(const std::string& pattern, const std::string& candidate) {
  static constexpr std::string_view placeholder = "{candidate}";
  std::string out;
  std::size_t from = 0;
  for (auto at = pattern.find(placeholder); at != std::string::npos;
       at = pattern.find(placeholder, from)) {
    out += pattern.substr(from, at - from);
    out += remote::shell_quote(candidate);
    from = at + placeholder.size();
  }
  return out + pattern.substr(from);
}

BisectOutcome run_bisect(const BisectOptions& options, const std::atomic<bool>& interrupt,
                         BisectEvents& events) {
  return Bisect(options, interrupt, events).go();
}

}  // namespace rocehil::run
