#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rocehil::suites {

// How a metric is split by traffic class. A priority (0-7) is the PFC class and the switch queue;
// a DSCP (0-63) is what the IP header carries and what a mirror port sees. `[3]` and `[prio=3]`
// are one priority; `[dscp=26]` a DSCP.
enum class Index : std::uint8_t {
  none,               // one value: busbw_gbps
  priority,           // always by priority: switch_pfc_tx[3]
  total_or_priority,  // pfc_frames, and pfc_frames[prio=3]
  total_or_dscp,      // ecn_marked, and ecn_marked[dscp=26]
};

// The metrics a threshold may name: what each measures and in what unit. A suite naming anything
// else is refused when it is loaded, with the nearest known name.
struct MetricInfo {
  std::string_view name;
  std::string_view unit;
  std::string_view meaning;
  Index index = Index::none;
  // Where its value comes from on each provider; "not measured" says what to use instead. The
  // table in docs/metrics.md is these rows (a test holds it to that).
  std::string_view on_soft;
  std::string_view on_verbs;
};

const std::vector<MetricInfo>& known_metrics();
const MetricInfo* find_metric(std::string_view name);

// Which way a metric gets worse, for trends: lower bandwidth, higher latency or more errors.
// `neither` for what has no better side (sizes, byte counts, the reconciliations, which are
// right at 1, and calibration). An indexed name ("switch_pfc_rx[3]") is its metric's.
enum class Better { higher, lower, neither };
Better better_when(std::string_view metric);

// Names an expression may use besides numbers: the test case's own facts and a baseline run's
// metrics ("baseline.busbw_gbps").
struct NameInfo {
  std::string_view name;
  std::string_view meaning;
};
const std::vector<NameInfo>& known_names();
bool is_known_name(std::string_view name);

// The known spelling nearest to `name` (for "did you mean"), or empty.
std::string_view nearest_metric(std::string_view name);
std::string_view nearest_name(std::string_view name);

}  // namespace rocehil::suites
