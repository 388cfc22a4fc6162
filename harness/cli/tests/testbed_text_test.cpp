// `rocehil testbed status` as text: a --lossless testbed's line per switch.

#include "testbed/testbed_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

testbed::NamespaceStatus a_switch(const std::string& name,
                                  std::optional<testbed::DataplaneStatus> dataplane) {
  testbed::NamespaceStatus ns;
  ns.spec.name = name;
  ns.spec.netns = "rocehil-t1-" + name;
  ns.spec.role = testbed::Role::leaf;
  ns.exists = true;
  ns.dataplane = std::move(dataplane);
  return ns;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(TestbedStatusText, ALosslessTestbedHasALinePerSwitch) {
  testbed::StatusResult s;
  s.id = "t1";
  s.phase = "up";
  s.lossless = true;
  std::vector<testbed::dataplane::PortSnapshot> ports(2);
  ports[0].forwarded = 10;
  ports[1].forwarded = 5;
  ports[0].queue[3].ecn_marked = 4;
  ports[1].queue[0].dropped = 2;
  ports[1].unresolved = 1;
  ports[0].socket_drops = 7;
  ports[0].priority[3].pfc_sent = 6;
  ports[1].priority[4].pfc_received = 3;
  ports[1].priority[3].storms_detected = 1;
  s.namespaces.push_back(a_switch("l1", testbed::DataplaneStatus{"/run/x", ports, ""}));
  ports[1].priority[3].lossless_drops = 9;
  s.namespaces.push_back(a_switch("l2", testbed::DataplaneStatus{"/run/y", ports, ""}));
  s.namespaces.push_back(
      a_switch("s1", testbed::DataplaneStatus{"/run/z", std::nullopt, "/run/z: cannot open"}));
  const std::string text = render_status_text(s);
  EXPECT_TRUE(
      has_line(text,
               "  l1       forwarded 15; PFC sent 6, received 3; ECN marked 4; drops 2 "
               "(queues) + 1 (no route, unresolved, TTL) + 7 (its sockets, the process away); "
               "lossless drops 0; PFC storms 1"))
      << text;
  EXPECT_NE(
      text.find("  l2       forwarded 15; PFC sent 6, received 3; ECN marked 4; drops 2 "
                "(queues) + 1 (no route, unresolved, TTL) + 7 (its sockets, the process away); "
                "LOSSLESS DROPS 9; PFC storms 1"),
      std::string::npos)
      << text;
  EXPECT_TRUE(has_line(text, "  s1       NO COUNTERS: /run/z: cannot open")) << text;
}

TEST(TestbedStatusText, ANormalTestbedHasNoLosslessLines) {
  testbed::StatusResult s;
  s.id = "t1";
  s.phase = "up";
  s.namespaces.push_back(a_switch("l1", std::nullopt));
  EXPECT_EQ(render_status_text(s).find("lossless"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::cli
