#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace rocehil::testbed {

// Which of a switch's mirrored ports a copy came from, and in which direction, told from the
// frame's MAC addresses as a switch's own forwarding table would: a frame the port sent carries
// the port's address as its source; one it received, as its destination (unicast), or the far
// end's address as its source (broadcast and multicast, LLDP say), which it learns from the
// frames that show it. The copies themselves carry no port: tc mirred sends every port's to one
// interface, and this kernel has no action to mark them.

using MacAddress = std::array<std::uint8_t, 6>;

struct MirroredPortAddress {
  int ifindex = 0;
  MacAddress mac{};
};

struct PortMatch {
  int ifindex = 0;      // 0: none of the ports
  bool egress = false;  // the port sent it
};

class MirroredPorts {
 public:
  explicit MirroredPorts(std::vector<MirroredPortAddress> ports);

  // Allocates nothing: it runs once per copy.
  PortMatch match(std::span<const std::uint8_t> frame);

 private:
  struct Port {
    MirroredPortAddress self;
    MacAddress peer{};
    bool peer_known = false;
  };
  std::vector<Port> ports_;
};

}  // namespace rocehil::testbed
