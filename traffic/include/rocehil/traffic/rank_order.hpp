#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rocehil::traffic {

// Which NIC of which host each rank is. Ranks come from the selected hosts x their NICs (rails);
// a host's ranks stay together, rail by rail, so a hierarchical plan finds them as
// host x ranks_per_host + rail whatever the placement.
enum class Placement : std::uint8_t {
  packed,      // racks one after the other: ring neighbours share a rack where they can
  fragmented,  // hosts dealt round the racks: ring neighbours sit in different racks, so the
               // traffic crosses the spine as a job scattered by a busy scheduler does
};
std::string_view to_string(Placement placement);
std::optional<Placement> placement_from_name(std::string_view name);

struct RankSlot {
  int host = 0;  // index among the selected hosts, in inventory order
  int rack = 0;  // the host's rack, as an index; hosts without a rack share one
  int rail = 0;  // the NIC's index on its host
};

// The slots in rank order: rank i is slots[result[i]]. Stable: equal keys keep input order.
std::vector<int> order_ranks(const std::vector<RankSlot>& slots, Placement placement);

}  // namespace rocehil::traffic
