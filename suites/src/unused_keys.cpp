#include "unused_keys.hpp"

#include <fmt/format.h>

#include <optional>
#include <string_view>

namespace rocehil::suites::detail {

namespace {

bool is_collective(const SuiteTest& t) {
  return !is_point_to_point(t) && !is_calibration(t) && t.workload != parts_workload;
}

// Why the test's workload does not use `key`, or nothing when it does.
std::optional<std::string> why_unused(const SuiteTest& t, std::string_view key) {
  const std::string_view w = t.workload;
  if (key == "pipeline" && w != "broadcast" && w != "tree_allreduce")
    return "pipeline splits the message of broadcast and tree_allreduce only";
  if (key == "rounds" && !is_calibration(t))
    return "rounds are a calibration's (calibrate_bw, calibrate_lat)";
  if (w == "bw" && (key == "iterations" || key == "warmup"))
    return "bw runs for duration_s (its first 0.2 s unmeasured), not by iterations";
  if (w == "lat" && key == "duration_s") return "lat runs `iterations` ping-pongs, not for a time";
  if (w == "lat" && key == "opcode") return "lat pings with SEND";
  if (is_collective(t) && key == "opcode" && t.settings.opcode != "write_with_imm")
    return "a collective's steps are RDMA WRITE with immediate (the immediate tells the receiver a "
           "step's data arrived), whatever opcode says; use workload bw for a WRITE-only sender";
  return std::nullopt;
}

}  // namespace

void check_keys_used(inventory::LoadContext& ctx, const inventory::MapReader& m,
                     const inventory::MapReader* outer, const std::string& owner, SuiteTest& t) {
  if (t.workload == "iperf3" || t.workload == parts_workload) return;  // their own checks
  for (const std::string_view key :
       {"pipeline", "rounds", "iterations", "warmup", "duration_s", "opcode"})
    if (m.has(key))
      if (const auto why = why_unused(t, key))
        ctx.error(m.get(key), fmt::format("{}: {} is not used by workload {}: {}; drop {}", owner,
                                          key, t.workload, *why, key));
  if (!is_collective(t)) return;
  // A collective runs by iterations, or for duration_s when that is what its test (or part)
  // writes; the part's own key over the test's.
  const auto written = [&](std::string_view key) {
    return m.has(key) ||
           (outer != nullptr && outer->has(key) && !m.has("duration_s") && !m.has("iterations"));
  };
  if (m.has("duration_s") && m.has("iterations")) {
    ctx.error(m.get("iterations"),
              fmt::format("{}: give duration_s (run for about that long) or iterations (run that "
                          "many), not both",
                          owner));
    return;
  }
  t.settings.collective_by_duration = written("duration_s") && !written("iterations");
}

}  // namespace rocehil::suites::detail
