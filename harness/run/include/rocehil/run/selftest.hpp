#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

// rocehil selftest: two hosts, the acceptance suite, and the checks a user bringing up a fabric
// needs answered, each pass, fail, error or skip with the reason. The suite runs through the same
// code as `rocehil run`; what is here is pure: the suite's text in, run.json in, checks out.
namespace rocehil::run {

// suites/acceptance.yaml as built into the binary: $HOSTS and the list marked '# $CAPTURES' are
// filled in.
std::string_view acceptance_suite_template();

// The suite for `hosts` (two inventory host names) and the capture points `captures`. Throws
// rocehil::Error (bad input) for a name that is not letters, digits, '.', '_', '-' or '@' (so it
// cannot break out of its YAML scalar) or a template without the placeholders.
std::string instantiate_acceptance_suite(std::string_view text,
                                         const std::vector<std::string>& hosts,
                                         const std::vector<std::string>& captures);

// What the run cannot say by itself: the pair as the inventory describes it.
struct SelftestSetup {
  std::vector<std::string> hosts;      // the pair, as given
  std::vector<std::string> providers;  // per host: "verbs" or "soft"
  std::vector<bool> gpus;              // per host: the inventory pairs a GPU with its NIC
  std::vector<std::string> captures;   // capture points given with --captures
};

// Both hosts have a GPU paired with their NIC: the acceptance suite's gpu_memory test runs.
bool pair_has_gpus(const SelftestSetup& setup);

// A test of the acceptance suite the pair cannot take, and why (UD, NIC counters and perftest on
// soft hosts; GPU memory without GPUs). The run skips it, so its files say what the checklist
// says.
struct PairLimit {
  std::string test;
  std::string reason;
};
std::vector<PairLimit> tests_the_pair_cannot_take(const SelftestSetup& setup);

enum class CheckVerdict { pass, fail, error, skip };
std::string_view to_string(CheckVerdict verdict);

struct SelftestCheck {
  std::string name;  // rc_write, ...
  std::string what;  // one line: what it proves
  CheckVerdict verdict = CheckVerdict::skip;
  std::string detail;  // the numbers behind a pass, the reason for anything else
  std::string test;    // the acceptance suite's test it reads, if any
};

struct SelftestReport {
  std::vector<SelftestCheck> checks;
  // fail when a check failed, else error when one could not be decided, else pass; skipped
  // checks are listed, never counted as passed. Never better than the run's own exit status: a
  // run that exited worse than its checks say adds a check named "run" saying so.
  CheckVerdict verdict = CheckVerdict::pass;
  int exit_code() const;  // 0 pass, 1 fail, 3 error
};

// Every check, in the order a user reads them, from the acceptance suite's run.json. A case the
// run skipped is a skipped check with the run's reason.
SelftestReport evaluate_selftest(const nlohmann::json& run, const SelftestSetup& setup);

// The one file to attach to a bug: the checks, the setup and the whole run.json.
nlohmann::json selftest_json(const SelftestReport& report, const SelftestSetup& setup,
                             const nlohmann::json& run);

}  // namespace rocehil::run
