#include "rocehil/switches/cabling.hpp"

#include <gtest/gtest.h>

#include <set>

#include "rocehil/inventory/load.hpp"

namespace rocehil::switches {
namespace {

inventory::Inventory fabric(const std::string& links) {
  auto r = inventory::parse_inventory(
      "schema_version: 1\nhosts:\n  - {name: h1, provider: soft}\n  - {name: h2, provider: soft}\n"
      "switches:\n  - {name: l1, role: leaf}\n  - {name: s1, role: spine}\n"
      "  - {name: s2, role: spine}\nlinks:\n" +
          links,
      "f.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << to_string(d);
  return std::move(*r.inventory);
}

const std::string design =
    "  - {name: h1-l1, a: 'h1:eth0', b: 'l1:swp1'}\n"
    "  - {name: l1-s1, a: 'l1:swp51', b: 's1:swp1'}\n"
    "  - {name: l1-s2, a: 'l1:swp52', b: 's2:swp1'}\n";

LldpNeighbor heard(std::string local, std::string system, std::string port) {
  LldpNeighbor n;
  n.local_port = std::move(local);
  n.remote_system = std::move(system);
  n.remote_port_id = std::move(port);
  n.remote_port_id_subtype = 5;
  return n;
}

// The fabric as cabled: h1 on l1:swp1, l1 to both spines.
std::vector<LldpView> as_cabled() {
  return {
      {"l1",
       "",
       {heard("swp1", "h1", "eth0"), heard("swp51", "s1", "swp1"), heard("swp52", "s2", "swp1")}},
      {"s1", "", {heard("swp1", "l1", "swp51")}},
      {"s2", "", {heard("swp1", "l1.lab.example.com", "swp52")}},
  };
}

std::vector<CablingFinding> of_kind(const std::vector<CablingFinding>& all,
                                    CablingFinding::Kind kind) {
  std::vector<CablingFinding> out;
  for (const auto& f : all)
    if (f.kind == kind) out.push_back(f);
  return out;
}

TEST(Cabling, EveryLinkAsDesignedIsOk) {
  const auto findings = check_cabling(fabric(design), as_cabled());
  EXPECT_EQ(of_kind(findings, CablingFinding::Kind::ok).size(), 3u);
  EXPECT_EQ(findings.size(), 3u) << findings.back().message;
}

TEST(Cabling, TwoLinksSwappedInTheInventoryAreBothNamed) {
  const auto findings = check_cabling(fabric("  - {name: h1-l1, a: 'h1:eth0', b: 'l1:swp1'}\n"
                                             "  - {name: l1-s1, a: 'l1:swp52', b: 's1:swp1'}\n"
                                             "  - {name: l1-s2, a: 'l1:swp51', b: 's2:swp1'}\n"),
                                      as_cabled());
  const auto bad = of_kind(findings, CablingFinding::Kind::miscabled);
  ASSERT_EQ(bad.size(), 4u);  // each link from both of its switch ends
  std::set<std::string> links;
  for (const auto& f : bad) links.insert(f.link);
  EXPECT_EQ(links, (std::set<std::string>{"l1-s1", "l1-s2"}));
  EXPECT_EQ(bad[0].message,
            "link 'l1-s1': the design says l1:swp52 - s1:swp1, but LLDP on l1:swp52 sees "
            "s2:swp1 (an end of link 'l1-s2': the two are swapped)");
}

TEST(Cabling, MissingAndExtraCablesNameBothEnds) {
  auto views = as_cabled();
  views[0].neighbors.erase(views[0].neighbors.begin());       // h1's cable is out
  views[1].neighbors.push_back(heard("swp9", "h2", "eth0"));  // h2 plugged into a spine
  const auto findings = check_cabling(fabric(design), views);
  const auto missing = of_kind(findings, CablingFinding::Kind::missing);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].message,
            "link 'h1-l1': l1:swp1 hears no LLDP neighbour; the design says it is cabled to "
            "h1:eth0 (check the cable and that LLDP runs on h1)");
  const auto extra = of_kind(findings, CablingFinding::Kind::extra);
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(extra[0].seen, "s1:swp9 - h2:eth0");
}

TEST(Cabling, ASwitchThatDidNotAnswerLeavesItsLinksUnverified) {
  auto views = as_cabled();
  views[0].error = "no answer";
  views[1].error = "no answer";
  const auto findings = check_cabling(fabric(design), views);
  const auto unverified = of_kind(findings, CablingFinding::Kind::unverified);
  ASSERT_EQ(unverified.size(), 2u);  // h1-l1 and l1-s1; l1-s2 is checked from s2
  EXPECT_EQ(unverified[0].link, "h1-l1");
  EXPECT_EQ(of_kind(findings, CablingFinding::Kind::ok).size(), 1u);
}

TEST(Cabling, LinksWrittenFromLldpHoldEachCableOnce) {
  const auto links = links_from_lldp(as_cabled());
  ASSERT_EQ(links.size(), 3u);  // s2 hears "l1.lab.example.com": the switch l1
  EXPECT_EQ(links[0].name, "h1-l1");
  EXPECT_EQ(links[0].a.node, "h1");
  EXPECT_EQ(links[0].b.port, "swp1");
}

}  // namespace
}  // namespace rocehil::switches
