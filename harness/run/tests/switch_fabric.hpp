#pragma once

// The inventory the switch tests share: two racks of one host, two spines, an out-of-band switch
// and a spine mirror; every switch answers SNMP.

#include <gtest/gtest.h>

#include "rocehil/inventory/load.hpp"

namespace rocehil::run::testing {

inline inventory::Inventory switch_fabric() {
  auto r = inventory::parse_inventory(R"(schema_version: 1
defaults:
  snmp: {version: 2c, community_env: C}
hosts:
  - {name: h1, rack: r1, provider: soft, nics: [{netdev: eth0, ip: 10.0.1.1, link: h1-l1}]}
  - {name: h2, rack: r2, provider: soft, nics: [{netdev: eth0, ip: 10.0.2.1, link: h2-l2}]}
racks:
  - {name: r1, leaf: l1}
  - {name: r2, leaf: l2}
switches:
  - {name: "l[1-2]", role: leaf, rack: "r[1-2]"}
  - {name: "s[1-2]", role: spine}
  - {name: oob, role: other}
links:
  - {name: h1-l1, a: "h1:eth0", b: "l1:swp1"}
  - {name: h2-l2, a: "h2:eth0", b: "l2:swp1"}
  - {name: l1-s1, a: "l1:swp51", b: "s1:swp1"}
  - {name: l1-s2, a: "l1:swp52", b: "s2:swp1"}
  - {name: l2-s1, a: "l2:swp51", b: "s1:swp2"}
  - {name: l2-s2, a: "l2:swp52", b: "s2:swp2"}
captures:
  - {name: s1-mirror, host: h1, interface: m1, mirrors: {switch: s1, links: [l1-s1, l2-s1], direction: spine-to-leaf}}
)",
                                      "f.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << to_string(d);
  return std::move(*r.inventory);
}

}  // namespace rocehil::run::testing
