#include "volume.hpp"

#include <fmt/format.h>

#include <optional>

namespace rocehil::suites::detail {

namespace {

// perftest's -n as the agent protocol takes it (PerftestRequest::iterations), and perftest's own
// floor of 5 iterations.
constexpr std::uint64_t perftest_min_messages = 5;
constexpr std::uint64_t perftest_max_messages = 100'000'000;

// Why workload `t` cannot take a volume, or nothing when it can.
std::optional<std::string> why_no_volume(const SuiteTest& t) {
  if (is_calibration(t))
    return "a calibration runs both engines for the same whole seconds (duration_s)";
  const std::string_view w = t.workload;
  if (w == "bw") return std::nullopt;
  if (w == "lat") return "lat runs `iterations` ping-pongs of one message over one QP";
  if (w == "iperf3") return "iperf3 runs for duration_s";
  return "a collective's size is per rank per iteration already; give iterations (or "
         "duration_s) to run more of it";
}

}  // namespace

void read_bytes(inventory::LoadContext& ctx, const inventory::MapReader& m, const std::string& what,
                TestSettings& s) {
  const YAML::Node n = m.get("bytes");
  if (!n.IsDefined()) {
    if (m.has("duration_s")) s.bytes = 0;  // the nearer key wins over the defaults' volume
    return;
  }
  if (m.has("duration_s")) {
    ctx.error(n, fmt::format("{}: give bytes (send that much per QP) or duration_s (send for "
                             "that long), not both",
                             what));
    return;
  }
  std::optional<std::uint64_t> v;
  if (n.IsScalar()) v = parse_size(n.Scalar());
  if (!v || *v == 0 || *v > max_volume_bytes) {
    ctx.error(n, fmt::format("{} must be one size from 1 byte to 1T such as 1M, 4G or 1T (the "
                             "payload each QP sends), got '{}'",
                             what, n.IsScalar() ? inventory::shown(n.Scalar()) : "a list or map"));
    return;
  }
  s.bytes = *v;
  s.bytes_where = inventory::location_of(n);
}

void check_volume(inventory::LoadContext& ctx, const inventory::MapReader& m,
                  const std::string& owner, SuiteTest& t) {
  TestSettings& s = t.settings;
  if (s.bytes == 0) return;
  if (const auto why = why_no_volume(t)) {
    if (m.has("bytes"))
      ctx.error(m.get("bytes"), fmt::format("{}: bytes is not used by workload {}: {}; drop bytes",
                                            owner, t.workload, *why));
    s.bytes = 0;
    return;
  }
  const YAML::Node at = m.has("bytes") ? m.get("bytes") : YAML::Node(YAML::NodeType::Undefined);
  const auto error = [&](const std::string& message) {
    if (at.IsDefined())
      ctx.error(at, message);
    else
      ctx.error(s.bytes_where, message);
  };
  for (const std::uint64_t size : s.sizes) {
    const std::uint64_t messages = s.bytes / size;
    if (s.bytes % size != 0) {
      const std::uint64_t below = messages * size, above = below + size;
      error(fmt::format(
          "{}: bytes {} is not a whole number of {}-byte messages (size); use {}", owner, s.bytes,
          size, below == 0 ? fmt::format("{}", above) : fmt::format("{} or {}", below, above)));
      continue;
    }
    if (s.engine == "perftest" &&
        (messages < perftest_min_messages || messages > perftest_max_messages))
      error(
          fmt::format("{}: engine perftest sends bytes as -n {} messages of {} bytes per QP, "
                      "and takes {} to {}; change bytes or size, or use engine rocehil",
                      owner, messages, size, perftest_min_messages, perftest_max_messages));
  }
}

}  // namespace rocehil::suites::detail
