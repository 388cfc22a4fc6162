#include "rocehil/switches/lldp.hpp"

#include <gtest/gtest.h>

#include "rows.hpp"

namespace rocehil::switches {
namespace {

using namespace test;

// As `snmpbulkwalk -v2c -On` printed them from snmpd 5.9.3 with lldpd 1.0.16 over AgentX on
// Debian 12 (namespace xa, neighbour hostB on veth xb0): the remote port ID is a MAC (subtype
// 3), its description the interface name, and lldpLocPortNum is the ifIndex.
std::vector<Varbind> lldpd_rows() {
  const std::string mac("\x0a\xae\x64\xe1\x79\x7b", 6);
  return {
      text(mib::if_name, {1}, "lo"),
      text(mib::if_name, {2}, "xa0"),
      integer(mib::lldp_rem_port_id_subtype, {500, 2, 1}, 3),
      text(mib::lldp_rem_port_id, {500, 2, 1}, mac),
      text(mib::lldp_rem_port_desc, {500, 2, 1}, "xb0"),
      text(mib::lldp_rem_sys_name, {500, 2, 1}, "hostB"),
      text(mib::lldp_loc_port_id, {2}, std::string("\xc6\x70\x21\x22\xab\xc5", 6)),
      text(mib::lldp_loc_port_desc, {2}, "xa0"),
  };
}

TEST(Lldp, LldpdNeighbourNamedByIfNameAndPortDescription) {
  const LldpView v = build_lldp_view("leafA", lldpd_rows());
  ASSERT_EQ(v.neighbors.size(), 1u);
  const LldpNeighbor& n = v.neighbors[0];
  EXPECT_EQ(n.local_port, "xa0");
  EXPECT_EQ(n.remote_system, "hostB");
  EXPECT_EQ(n.remote_port_id, "0a:ae:64:e1:79:7b");
  EXPECT_TRUE(n.remote_port_is("xb0"));
  EXPECT_FALSE(n.remote_port_is("0a:ae:64:e1:79:7b"));  // a MAC is not a port name
  EXPECT_EQ(n.remote(), "hostB:xb0");
}

TEST(Lldp, APortNumberThatIsNoIfIndexIsNamedByTheLocalPortId) {
  // As Arista and Cisco serve it: lldpLocPortNum 33 is not an ifIndex; the local port ID is.
  const LldpView v = build_lldp_view(
      "leaf01", {text(mib::if_name, {1000033}, "Ethernet33"), text(mib::if_name, {33}, "Mgmt1"),
                 text(mib::lldp_loc_port_id, {33}, "Ethernet33"),
                 integer(mib::lldp_rem_port_id_subtype, {0, 33, 5}, 5),
                 text(mib::lldp_rem_port_id, {0, 33, 5}, "Ethernet1/1"),
                 text(mib::lldp_rem_sys_name, {0, 33, 5}, "spine01.lab.example.com")});
  ASSERT_EQ(v.neighbors.size(), 1u);
  EXPECT_EQ(v.neighbors[0].local_port, "Ethernet33");
  EXPECT_TRUE(v.neighbors[0].remote_port_is("Ethernet1/1"));
}

}  // namespace
}  // namespace rocehil::switches
