#include "rocehil/traffic/qp_scaling.hpp"

#include <algorithm>
#include <unordered_set>

namespace rocehil::traffic {

namespace {

// SplitMix64's finalizer: a fixed, well-mixed hash, the same on every platform.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr std::uint32_t first_port = 49152;
constexpr std::uint32_t port_count = 65536 - first_port;

}  // namespace

std::string_view to_string(QpStrategy strategy) {
  return strategy == QpStrategy::split ? "split" : "round_robin";
}

std::optional<QpStrategy> qp_strategy_from_name(std::string_view name) {
  if (name == "split") return QpStrategy::split;
  if (name == "round_robin") return QpStrategy::round_robin;
  return std::nullopt;
}

std::uint32_t share_count(const QpScaling& scaling, std::uint64_t bytes) {
  if (bytes == 0) return 0;
  if (scaling.strategy == QpStrategy::round_robin) return 1;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(scaling.qps, bytes));
}

QpShare share(const QpScaling& scaling, std::uint64_t message, std::uint64_t bytes,
              std::uint32_t index) {
  if (scaling.strategy == QpStrategy::round_robin)
    return {static_cast<std::uint32_t>(message % scaling.qps), 0, bytes};
  const std::uint64_t n = share_count(scaling, bytes);
  const std::uint64_t base = bytes / n;
  const std::uint64_t extra = bytes % n;
  const std::uint64_t i = index;
  return {index, i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

std::vector<std::uint16_t> udp_source_ports(std::uint64_t seed, int rank, std::size_t count,
                                            std::span<const std::uint16_t> pinned) {
  std::vector<std::uint16_t> ports(count);
  if (!pinned.empty()) {
    for (std::size_t j = 0; j < count; ++j) ports[j] = pinned[j % pinned.size()];
    return ports;
  }
  // More QPs than ports cannot all differ; past that point repeats are allowed.
  std::unordered_set<std::uint16_t> used;
  std::uint64_t state = mix(seed ^ mix(static_cast<std::uint64_t>(rank)));
  for (std::size_t j = 0; j < count; ++j) {
    std::uint16_t port = 0;
    do {
      state = mix(state);
      port = static_cast<std::uint16_t>(first_port + state % port_count);
    } while (used.size() < port_count && used.contains(port));
    used.insert(port);
    ports[j] = port;
  }
  return ports;
}

}  // namespace rocehil::traffic
