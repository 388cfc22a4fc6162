#include "mirrors/mirror_relays.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace rocehil::testbed {
namespace {

TEST(MirrorRelays, EachSpineRunsItsSessionFromItsManagementAddress) {
  TestbedOptions o;
  o.dir = "/srv/tb";
  o.id = "t1";
  o.spines = 2;
  o.mirror_mode = MirrorMode::erspan2;
  o.mirror_truncate = 128;
  const Topology t = build_topology(o, 8);
  const auto argv = mirror_relay_argv(t.mirrors[1], t, TestbedPaths{o.dir}, "/usr/bin/rocehil");
  const std::vector<std::string> expected = {"/usr/bin/rocehil",
                                             "testbed",
                                             "mirror-relay",
                                             "--netns",
                                             "rocehil-t1-s2",
                                             "--mode",
                                             "erspan2",
                                             "--session",
                                             "2",
                                             "--source",
                                             "198.19.9.202",
                                             "--destination",
                                             "198.19.8.2",
                                             "--interface",
                                             "t1-relay",
                                             "--port",
                                             "t1-l1",
                                             "--port",
                                             "t1-l2",
                                             "--truncate",
                                             "128",
                                             "--pid-file",
                                             "/srv/tb/run/rocehil-t1-s2.mirror-relay.pid",
                                             "--counters-file",
                                             "/srv/tb/run/rocehil-t1-s2.mirror-relay.json"};
  EXPECT_EQ(argv, expected);
}

TEST(MirrorRelays, ALocalMirrorHasNone) {
  TestbedOptions o;
  o.dir = "/srv/tb";
  o.id = "t1";
  const Topology t = build_topology(o, 8);
  EXPECT_TRUE(std::none_of(t.mirrors.begin(), t.mirrors.end(),
                           [](const MirrorSession& m) { return m.remote.has_value(); }));
  EXPECT_TRUE(mirror_relay_status(t, TestbedPaths{o.dir}).empty());
}

}  // namespace
}  // namespace rocehil::testbed
