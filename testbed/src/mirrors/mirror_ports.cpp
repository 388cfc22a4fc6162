#include "rocehil/testbed/mirror_ports.hpp"

#include <algorithm>

namespace rocehil::testbed {

namespace {

bool same(const std::uint8_t* a, const MacAddress& b) {
  return std::equal(b.begin(), b.end(), a);
}

bool unicast(const std::uint8_t* mac) {
  return (mac[0] & 1) == 0;
}

}  // namespace

MirroredPorts::MirroredPorts(std::vector<MirroredPortAddress> ports) {
  for (const auto& p : ports) ports_.push_back({p, {}, false});
}

PortMatch MirroredPorts::match(std::span<const std::uint8_t> frame) {
  if (frame.size() < 12) return {};
  const std::uint8_t* destination = frame.data();
  const std::uint8_t* source = frame.data() + 6;
  for (auto& p : ports_) {
    if (same(source, p.self.mac)) {
      if (unicast(destination)) {
        std::copy_n(destination, 6, p.peer.begin());
        p.peer_known = true;
      }
      return {p.self.ifindex, true};
    }
  }
  for (auto& p : ports_) {
    if (same(destination, p.self.mac)) {
      std::copy_n(source, 6, p.peer.begin());
      p.peer_known = true;
      return {p.self.ifindex, false};
    }
  }
  for (const auto& p : ports_)
    if (p.peer_known && same(source, p.peer)) return {p.self.ifindex, false};
  return {};
}

}  // namespace rocehil::testbed
