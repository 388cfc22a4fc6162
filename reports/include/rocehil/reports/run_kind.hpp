#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::reports {

// What kind of run a run was. Only a full run of a suite says what the fabric does under that
// suite: a bisect step ran with a candidate put in place, an --only run measured some cases, a
// --set run changed the fabric's settings. Recorded with every run (run.json, the history) so
// that `last-qualified` and trends take full runs only, and `rocehil history` can say which is
// which. (A one-case bisect step once became a nightly's baseline, and every other case of the
// nightly went ERROR "no baseline value".)
//
// A run can be several things at once (a bisect step with --only, --only with --set): its kind
// is the most specific, bisect > selftest > calibrate > only > set > full, and RunKindInfo keeps
// what made it so (the --only glob, the --set assignments) whatever the kind.
enum class RunKind : std::uint8_t {
  full,       // `rocehil run SUITE`: every case, the suite's own settings
  only,       // `rocehil run --only GLOB`: the cases it matched
  set,        // `rocehil run --set KEY=VALUE`: settings over the suite's
  bisect,     // a step of `rocehil bisect`: a candidate applied
  selftest,   // `rocehil selftest`: the acceptance suite on two hosts
  calibrate,  // `rocehil calibrate`: a point-to-point case repeated to set limits
  // Recorded before kinds were (history schema 1) by a command line that says nothing of its
  // kind. Counted as full: it was recorded as an ordinary run, and most were.
  unknown,
};

std::string_view to_string(RunKind k);
std::optional<RunKind> parse_run_kind(std::string_view name);

// Which kinds a reader takes: a small set.
class RunKinds {
 public:
  constexpr RunKinds() = default;  // none
  constexpr RunKinds(std::initializer_list<RunKind> kinds) {
    for (const RunKind k : kinds) bits_ |= bit(k);
  }
  static constexpr RunKinds all() {
    return {RunKind::full,     RunKind::only,      RunKind::set,    RunKind::bisect,
            RunKind::selftest, RunKind::calibrate, RunKind::unknown};
  }
  // What baselines (last-qualified) and trends take unless asked otherwise.
  static constexpr RunKinds full_runs() { return {RunKind::full, RunKind::unknown}; }
  constexpr RunKinds& insert(RunKind k) {
    bits_ |= bit(k);
    return *this;
  }
  constexpr bool contains(RunKind k) const { return (bits_ & bit(k)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const RunKinds&) const = default;
  // In the order of the enum.
  std::vector<RunKind> list() const;

 private:
  static constexpr std::uint32_t bit(RunKind k) { return 1u << static_cast<unsigned>(k); }
  std::uint32_t bits_ = 0;
};

// A --kind option's value: "all", or kind names separated by commas ("full,set"). "full" takes
// unknown runs too (see RunKind::unknown). Throws rocehil::Error (bad input) naming `option` and
// the kinds there are.
RunKinds parse_run_kinds(std::string_view text, std::string_view option = "--kind");

// A run's kind and what made it so.
struct RunKindInfo {
  RunKind kind = RunKind::full;
  std::string only;              // --only's glob; empty when every case was selected
  std::vector<std::string> set;  // --set's KEY=VALUE in order (a bisect step's candidate too)
  bool operator==(const RunKindInfo&) const = default;
};

// For a sentence: "a full run", "an --only 'p2p*' run", "a --set run (roce_rp.rpg_gd=9)",
// "a bisect step", ...
std::string describe(const RunKindInfo& kind);

// The kind of a run started as `started_as` (full for `rocehil run`; bisect, selftest or
// calibrate for the commands that run suites themselves), with --only and --set as given.
RunKindInfo kind_of_run(RunKind started_as, std::string only, std::vector<std::string> set);

// What an old run's recorded command line says of its kind (history schema 1 kept no kind):
// `rocehil run` with --only or --set, bisect, selftest, calibrate; unknown when it is not one of
// rocehil's own command lines. Words are split as sh would (single and double quotes,
// backslashes), as remote_command_line quoted them.
RunKindInfo kind_from_command_line(std::string_view command_line);

}  // namespace rocehil::reports
