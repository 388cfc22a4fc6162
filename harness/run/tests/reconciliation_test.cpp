// Capture = mirror = counters: which CNPs a set of spine mirrors must see, and the ratio of what
// they saw to what the NICs say they sent, over an inventory shaped like docs/inventory.md's.
#include "rocehil/run/reconciliation.hpp"

#include <gtest/gtest.h>

#include "rocehil/inventory/load.hpp"

namespace rocehil::run {
namespace {

inventory::Inventory fabric(const std::string& spine2_mirror = "links: [l1-s2, l2-s2]",
                            const std::string& direction = "spine-to-leaf") {
  const std::string text = R"(schema_version: 1
name: t
defaults: {provider: soft}
hosts:
  - {name: h1, address: 10.0.0.1, rack: r1, nics: [{netdev: e0, ip: 10.1.0.1, link: h1-l1}]}
  - {name: h2, address: 10.0.0.2, rack: r1, nics: [{netdev: e0, ip: 10.1.0.2}]}
  - {name: h3, address: 10.0.0.3, rack: r2, nics: [{netdev: e0, ip: 10.1.0.3}]}
  - {name: cap, address: 10.0.0.9, nics: []}
racks:
  - {name: r1, leaf: l1}
  - {name: r2, leaf: l2}
switches:
  - {name: "l[1-2]", role: leaf, rack: "r[1-2]"}
  - {name: "s[1-2]", role: spine}
links:
  - {name: l1-s1, a: "l1:p1", b: "s1:p1"}
  - {name: l1-s2, a: "l1:p2", b: "s2:p1"}
  - {name: l2-s1, a: "l2:p1", b: "s1:p2"}
  - {name: l2-s2, a: "l2:p2", b: "s2:p2"}
  - {name: h1-l1, a: "h1:e0", b: "l1:p9"}
captures:
  - {name: m1, host: cap, interface: x1, mirrors: {switch: s1, links: [l1-s1, l2-s1], direction: )" +
                           direction + R"(}}
  - {name: m2, host: cap, interface: x2, mirrors: {switch: s2, )" +
                           spine2_mirror + ", direction: " + direction + R"(}}
  - {name: host-port, host: cap, interface: x3, mirrors: {switch: l1, links: [h1-l1], direction: both}}
)";
  auto r = inventory::parse_inventory(text, "t.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.inventory.value();
}

TEST(Reconciliation, SpineMirrorsSeeEveryCrossRackCnpOnceOrTwice) {
  const SpineCoverage once = spine_coverage(fabric(), {"m1", "m2"}, {"h1", "h3"});
  ASSERT_TRUE(once.copies) << once.why;
  EXPECT_EQ(*once.copies, 1);
  EXPECT_EQ(once.rack_of.at("h3"), "r2");
  EXPECT_EQ(
      *spine_coverage(fabric("links: [l1-s2, l2-s2]", "both"), {"m1", "m2"}, {"h1", "h3"}).copies,
      2);
  const SpineCoverage half = spine_coverage(fabric(), {"m1"}, {"h1", "h3"});
  EXPECT_FALSE(half.copies);
  EXPECT_EQ(half.why, "link l1-s2 (l1 to s2) is not mirrored by the case's captures");
  // Ports, not links: which links they are cannot be told, so nothing is claimed.
  EXPECT_FALSE(spine_coverage(fabric("ports: [p1, p2]"), {"m1", "m2"}, {"h1", "h3"}).copies);
  EXPECT_NE(spine_coverage(fabric(), {"m1", "m2"}, {"cap"}).why.find("cap has no rack"),
            std::string::npos);
}

TEST(Reconciliation, CnpsAcrossRacksAgainstTheMirror) {
  const SpineCoverage c = spine_coverage(fabric(), {"m1", "m2"}, {"h1", "h2", "h3"});
  // Per QP (soft): h3's QPs toward h1 and h2 cross; h1's toward h2 stay in the rack.
  const std::vector<CnpsSent> sent = {
      {"h3", {"h1"}, 40}, {"h3", {"h2"}, 60}, {"h1", {"h2"}, 500}, {"h1", {"h3"}, 0}};
  const Reconciliation r = cnp_reconciliation(c, sent, 98);
  EXPECT_DOUBLE_EQ(r.measured.values.at("cnp_reconciliation"), 0.98);
  EXPECT_EQ(*r.nics, 100);
  EXPECT_EQ(*r.mirror, 98);
  EXPECT_EQ(r.to_json()["value"], 0.98);
  // A port's count (an RNIC) toward its own rack and another cannot be split.
  const Reconciliation mixed = cnp_reconciliation(c, {{"h1", {"h2", "h3"}, 77}}, 50);
  EXPECT_FALSE(mixed.measured.values.contains("cnp_reconciliation"));
  EXPECT_NE(mixed.measured.unmeasured.at("cnp_reconciliation").find("h1 counts its CNPs per port"),
            std::string::npos);
  EXPECT_EQ(mixed.to_json()["mirror"], 50);
  EXPECT_EQ(
      cnp_reconciliation(c, {{"h1", {"h3"}, 77}}, 154).measured.values.at("cnp_reconciliation"), 2);
  EXPECT_NE(cnp_reconciliation(c, {{"h1", {"h2"}, 9}}, 0)
                .measured.unmeasured.at("cnp_reconciliation")
                .find("no CNP was sent across racks"),
            std::string::npos);
  EXPECT_NE(cnp_reconciliation(c, sent, std::nullopt)
                .measured.unmeasured.at("cnp_reconciliation")
                .find("no capture"),
            std::string::npos);
}

TEST(Reconciliation, PauseFramesOnAMirroredNicLink) {
  std::vector<MirroredNicLink> links =
      mirrored_nic_links(fabric(), {"m1", "m2", "host-port"}, {"h1", "h2", "h3"});
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].host, "h1");
  EXPECT_EQ(links[0].direction, "both");
  EXPECT_NE(pfc_reconciliation(links, 10)
                .measured.unmeasured.at("pfc_reconciliation")
                .find("h1's NIC on link h1-l1 has no tx pause counters"),
            std::string::npos);
  links[0].tx_pause = 30;
  links[0].rx_pause = 10;
  EXPECT_DOUBLE_EQ(pfc_reconciliation(links, 40).measured.values.at("pfc_reconciliation"), 1);
  links[0].direction = "ingress";  // only what the host sends passes the mirror
  EXPECT_DOUBLE_EQ(pfc_reconciliation(links, 30).measured.values.at("pfc_reconciliation"), 1);
  // One priority's: its own key, from that priority's counts (the caller's).
  const auto three = pfc_reconciliation(links, 15, "pfc_reconciliation[3]");
  EXPECT_DOUBLE_EQ(three.measured.values.at("pfc_reconciliation[3]"), 0.5);
  EXPECT_FALSE(three.measured.values.contains("pfc_reconciliation"));
  EXPECT_NE(pfc_reconciliation({}, 5)
                .measured.unmeasured.at("pfc_reconciliation")
                .find("a spine link carries no NIC's pause frames"),
            std::string::npos);
}

}  // namespace
}  // namespace rocehil::run
