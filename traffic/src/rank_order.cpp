#include "rocehil/traffic/rank_order.hpp"

#include <algorithm>
#include <map>

namespace rocehil::traffic {

std::string_view to_string(Placement placement) {
  return placement == Placement::packed ? "packed" : "fragmented";
}

std::optional<Placement> placement_from_name(std::string_view name) {
  if (name == "packed") return Placement::packed;
  if (name == "fragmented") return Placement::fragmented;
  return std::nullopt;
}

std::vector<int> order_ranks(const std::vector<RankSlot>& slots, Placement placement) {
  // A host's position within its rack (0 for the rack's first host, ...), in input order.
  std::map<int, std::map<int, int>> position_in_rack;  // rack -> host -> position
  for (const auto& s : slots) {
    auto& hosts = position_in_rack[s.rack];
    hosts.emplace(s.host, static_cast<int>(hosts.size()));
  }
  auto position = [&](const RankSlot& s) { return position_in_rack[s.rack][s.host]; };

  std::vector<int> order(slots.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const RankSlot& x = slots[static_cast<std::size_t>(a)];
    const RankSlot& y = slots[static_cast<std::size_t>(b)];
    if (placement == Placement::packed) {
      if (x.rack != y.rack) return x.rack < y.rack;
    } else {
      const int px = position(x), py = position(y);
      if (px != py) return px < py;
      if (x.rack != y.rack) return x.rack < y.rack;
    }
    if (x.host != y.host) return x.host < y.host;
    return x.rail < y.rail;
  });
  return order;
}

}  // namespace rocehil::traffic
