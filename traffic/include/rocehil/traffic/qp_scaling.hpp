#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace rocehil::traffic {

// QP scaling (Meta, SIGCOMM'24): k QPs per connection give ECMP k flows to spread over the paths
// between two NICs, because each QP has its own UDP source port. Two ways to use them:
// - split: every message is cut in k shares, one per QP, sent at once;
// - round_robin: whole messages take the QPs in turn.
enum class QpStrategy : std::uint8_t { split, round_robin };
std::string_view to_string(QpStrategy strategy);
std::optional<QpStrategy> qp_strategy_from_name(std::string_view name);

// QPs one connection may have, a collective's or bw's: the SONiC RoCEv2 test plan scales to 4K+
// endpoints per port. A collective's immediate widens its share field past 256 of them
// (immediate_layout.hpp).
inline constexpr std::uint32_t max_qps_per_connection = 16384;

struct QpScaling {
  std::uint32_t qps = 1;  // per connection: 1..max_qps_per_connection
  QpStrategy strategy = QpStrategy::split;
};

struct QpShare {
  std::uint32_t qp = 0;      // 0..qps-1 within the connection
  std::uint64_t offset = 0;  // within the message
  std::uint64_t bytes = 0;
};

// How many non-empty shares the `message`-th message (counted per connection from 0) of `bytes`
// goes in, and share i of them. Both ends compute the same, so a receiver knows how many arrivals
// make the message whole. Nothing here allocates.
std::uint32_t share_count(const QpScaling& scaling, std::uint64_t bytes);
QpShare share(const QpScaling& scaling, std::uint64_t message, std::uint64_t bytes,
              std::uint32_t index);

// The UDP source ports of one rank's QPs, `count` of them (its connections x qps, connection by
// connection). From `pinned` when given: QP j takes pinned[j % size], the same on every run.
// Otherwise drawn from `seed` and the rank in 49152..65535 (where RNICs put RoCEv2 source ports),
// distinct within the rank (the soft provider binds one socket per port), and the same for the
// same seed: ECMP runs are repeatable.
std::vector<std::uint16_t> udp_source_ports(std::uint64_t seed, int rank, std::size_t count,
                                            std::span<const std::uint16_t> pinned = {});

}  // namespace rocehil::traffic
