#include "rocehil/testbed/link_state.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {
namespace {

Topology fabric() {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "t1";
  return build_topology(o, 8);
}

TEST(LinkState, ALinkIsItsTwoEndsInTheirNamespaces) {
  const Topology t = fabric();
  const std::vector<LinkPort> ports = link_ports(t, "l1-s1");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].netns, "rocehil-t1-l1");
  EXPECT_EQ(ports[1].netns, "rocehil-t1-s1");
  // The interfaces the topology gives that link, as `up` creates them.
  for (const LinkPort& p : ports) {
    const Namespace* ns = nullptr;
    for (const Namespace& n : t.namespaces)
      if (n.netns == p.netns) ns = &n;
    ASSERT_NE(ns, nullptr);
    const bool found =
        std::any_of(ns->interfaces.begin(), ns->interfaces.end(),
                    [&](const Interface& i) { return i.name == p.interface && i.link == "l1-s1"; });
    EXPECT_TRUE(found) << p.netns << " " << p.interface;
  }
  EXPECT_EQ(link_ports(t, "h1-l1").size(), 2u);
}

TEST(LinkState, AManagementLinkOrAnUnknownOneIsRefusedWithTheLinksThereAre) {
  const Topology t = fabric();
  try {
    link_ports(t, "mgmt-h1");
    FAIL() << "a management link was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("has no fabric link 'mgmt-h1'; its links: h1-l1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(link_ports(t, "l9-s9"), Error);
}

TEST(LinkState, AdminStateIsTheUpFlagNotTheCarrier) {
  EXPECT_TRUE(admin_up_in(
      R"([{"ifindex":4,"ifname":"t1-l1s1","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],"operstate":"UP"}])"));
  // Up, but its peer is down: no carrier, still administratively up.
  EXPECT_TRUE(admin_up_in(
      R"([{"ifname":"x","flags":["NO-CARRIER","BROADCAST","MULTICAST","UP"],"operstate":"LOWERLAYERDOWN"}])"));
  EXPECT_FALSE(
      admin_up_in(R"([{"ifname":"x","flags":["BROADCAST","MULTICAST"],"operstate":"DOWN"}])"));
  EXPECT_THROW(admin_up_in("Device \"x\" does not exist."), Error);
  EXPECT_THROW(admin_up_in("[]"), Error);
}

}  // namespace
}  // namespace rocehil::testbed
