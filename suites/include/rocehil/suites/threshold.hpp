#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::suites {

// A threshold of a suite: `metric op expression`, for example
//   busbw_gbps >= 0.9 * link_gbps        pfc_pause_fraction[3] <= 0.01
//   lat_p99_us <= 8                      busbw_gbps >= 0.95 * baseline.busbw_gbps
// The expression is numbers and names (known_names(), baseline.<metric>) with + - * / and
// parentheses. Pure: text in, a verdict out.

enum class Comparison : std::uint8_t { lt, le, gt, ge, eq, ne };
std::string_view to_string(Comparison c);

enum class Level : std::uint8_t { fail, warn };
std::string_view to_string(Level level);

struct MetricRef {
  std::string part;  // roce.busbw_gbps: the part of a test with parts; empty: the case's
  std::string name;
  std::optional<int> index;  // pfc_pause_fraction[3], ecn_marked[dscp=26]
  bool by_dscp = false;      // the index is a DSCP (0-63), not a priority
  // "pfc_pause_fraction[3]", "ecn_marked[dscp=26]", "roce.busbw_gbps": as measured values are
  // keyed ([prio=3] is keyed [3]).
  std::string key() const;
  // The key without the index ("roce.nic_rx_pause"), as a reason for every index is keyed.
  std::string name_key() const;
};

// The expression, as a small tree.
struct Expression {
  enum class Kind : std::uint8_t { number, name, negate, add, subtract, multiply, divide };
  Kind kind = Kind::number;
  double number = 0;
  std::string name;
  std::shared_ptr<const Expression> left, right;  // right unused by negate
};

struct Threshold {
  std::string text;  // as written
  MetricRef metric;
  Comparison op = Comparison::ge;
  Expression limit;
  Level level = Level::fail;
  int retry = 0;             // runs of the test case again before a failure stands
  int line = 0, column = 0;  // where its text starts in the suite file (0: not from a file)
};

struct ParsedThreshold {
  std::optional<Threshold> threshold;
  std::string error;  // "column 12: unknown name 'link_gbs' (did you mean 'link_gbps'?)"
  int column = 0;     // 1-based column of the problem in the text
};
ParsedThreshold parse_threshold(std::string_view text);

// Whether the limit names a baseline run's metric (baseline.<metric>): the run must be given one.
bool uses_baseline(const Threshold& t);

// The metrics of this run the limit names ("mirror_cnps" of 'pfc_frames <= 0.1 *
// mirror_cnps'), without their index; facts and baseline metrics are not among them. The left
// side's metric first, then the limit's, each once: every one the test must be able to measure.
std::vector<std::string> metrics_named(const Threshold& t);

// What a test case measured (metric key -> value) and the names an expression may use.
using Values = std::map<std::string, double, std::less<>>;

// Why a metric has no value, by metric key ("retransmits", "nic_rx_pause[3]") or, for every
// index of an indexed metric, by its name ("nic_rx_pause"): "not measured by the verbs provider
// (...); use nic_retransmits". A metric that could not be measured is absent, never 0.
using Unmeasured = std::map<std::string, std::string, std::less<>>;

// Where a metric's value came from, by metric key, for a person fixing what failed: the switch
// ports that dropped ("leaf01:Ethernet1/1 12, spine02:Ethernet1/3 2"). Shown beside a verdict
// that is not a pass.
using Attribution = std::map<std::string, std::string, std::less<>>;

// What a test case measured, and why each metric it could not measure is absent.
struct Measured {
  Values values;
  Unmeasured unmeasured;
  Attribution where;
  // Takes `other`'s values and reasons; a value clears a reason for the same key.
  void merge(const Measured& other);
  void absent(const std::string& key, std::string why);  // drops any value for `key`
};

enum class Verdict : std::uint8_t { pass, warn, fail, error };
std::string_view to_string(Verdict v);

struct Evaluation {
  Verdict verdict = Verdict::pass;
  std::optional<double> measured;
  std::optional<double> limit;
  std::string detail;  // "busbw_gbps = 0.26, needs >= 0.9", or why it could not be told
};

// pass, or the threshold's level when the comparison is false; error when the metric was not
// measured (with the reason from `unmeasured` when there is one) or the expression cannot be
// evaluated (a name without a value, division by zero).
Evaluation evaluate(const Threshold& t, const Values& measured, const Values& names,
                    const Unmeasured& unmeasured = {}, const Attribution& where = {});

// The limit's value, or nothing with the reason.
std::optional<double> evaluate(const Expression& e, const Values& names, std::string& why);

}  // namespace rocehil::suites
