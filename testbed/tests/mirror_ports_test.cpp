#include "rocehil/testbed/mirror_ports.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocehil::testbed {
namespace {

const MacAddress port_a = {0x02, 0, 0, 0, 0, 0x0a};  // the spine's port toward l1, ifindex 2
const MacAddress port_b = {0x02, 0, 0, 0, 0, 0x0b};  // toward l2, ifindex 3
const MacAddress leaf_1 = {0x02, 0, 0, 0, 1, 0x01};  // l1's end of the first link
const MacAddress leaf_2 = {0x02, 0, 0, 0, 2, 0x01};
const MacAddress broadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
const MacAddress lldp = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

std::vector<std::uint8_t> frame(const MacAddress& destination, const MacAddress& source) {
  std::vector<std::uint8_t> f(destination.begin(), destination.end());
  f.insert(f.end(), source.begin(), source.end());
  f.insert(f.end(), {0x08, 0x00});
  return f;
}

MirroredPorts spine() {
  return MirroredPorts({{2, port_a}, {3, port_b}});
}

bool same(PortMatch a, PortMatch b) {
  return a.ifindex == b.ifindex && a.egress == b.egress;
}

TEST(MirrorPorts, WhatAPortSentCarriesItsAddressAsSource) {
  MirroredPorts ports = spine();
  EXPECT_TRUE(same(ports.match(frame(leaf_1, port_a)), {2, true}));
  EXPECT_TRUE(same(ports.match(frame(leaf_2, port_b)), {3, true}));
  EXPECT_TRUE(same(ports.match(frame(lldp, port_b)), {3, true}));  // the spine's own LLDP
}

TEST(MirrorPorts, WhatAPortReceivedIsToItOrFromItsLearnedPeer) {
  MirroredPorts ports = spine();
  EXPECT_TRUE(same(ports.match(frame(port_a, leaf_1)), {2, false}));
  // l2 has not shown its address yet: its broadcast cannot be placed.
  EXPECT_TRUE(same(ports.match(frame(broadcast, leaf_2)), {0, false}));
  EXPECT_TRUE(same(ports.match(frame(broadcast, leaf_1)), {2, false}));
  EXPECT_TRUE(same(ports.match(frame(lldp, leaf_1)), {2, false}));
  // A unicast frame the spine sent toward l2 shows l2's address.
  ports.match(frame(leaf_2, port_b));
  EXPECT_TRUE(same(ports.match(frame(lldp, leaf_2)), {3, false}));
}

TEST(MirrorPorts, StrangersAndShortFramesAreNoPort) {
  MirroredPorts ports = spine();
  EXPECT_TRUE(same(ports.match(frame(leaf_1, leaf_2)), {0, false}));
  EXPECT_TRUE(same(ports.match(std::vector<std::uint8_t>(11, 0x02)), {0, false}));
  MirroredPorts none({});
  EXPECT_TRUE(same(none.match(frame(leaf_1, port_a)), {0, false}));
}

}  // namespace
}  // namespace rocehil::testbed
