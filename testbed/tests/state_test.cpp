#include "rocehil/testbed/state.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {
namespace {

class StateFile : public ::testing::Test {
 protected:
  std::string path = (std::filesystem::temp_directory_path() /
                      ("rocehil-state-test-" + std::to_string(::getpid()) + ".json"))
                         .string();
  void TearDown() override { std::filesystem::remove(path); }
  void write(const std::string& text) { std::ofstream(path) << text; }
};

TEST_F(StateFile, RoundTrip) {
  // Built as one aggregate: gcc 12 warns falsely about member-wise assignment of short strings.
  TestbedOptions options{.dir = "/srv/tb", .id = "q7"};
  TestbedState s{std::move(options), 0, {}};
  s.options.hosts = 8;
  s.options.racks = 4;
  s.options.ecn = false;
  s.options.mirror = MirrorDirection::both;
  s.options.mirror_mode = MirrorMode::erspan2;
  s.options.mirror_truncate = 128;
  s.options.routing = Routing::bgp;
  s.options.bfd = {250, 5};
  s.options.lossless = true;
  s.mgmt_octet = 77;
  s.phase = "building";
  write_state(path, s);
  const auto back = read_state(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->options.id, "q7");
  EXPECT_EQ(back->options.hosts, 8);
  EXPECT_EQ(back->options.racks, 4);
  EXPECT_FALSE(back->options.ecn);
  EXPECT_EQ(back->options.mirror, MirrorDirection::both);
  EXPECT_EQ(back->options.mirror_mode, MirrorMode::erspan2);
  EXPECT_EQ(back->options.mirror_truncate, 128);
  EXPECT_EQ(back->options.routing, Routing::bgp);
  EXPECT_EQ(back->options.bfd.interval_ms, 250);
  EXPECT_EQ(back->options.bfd.multiplier, 5);
  EXPECT_TRUE(back->options.lossless);
  EXPECT_EQ(back->mgmt_octet, 77);
  EXPECT_EQ(back->phase, "building");
}

// A testbed brought up before remote mirrors existed had local ones.
TEST_F(StateFile, OlderStateHasALocalMirror) {
  write(R"({"schema_version": 1, "id": "q7", "dir": "/srv/tb", "phase": "up", "mgmt_octet": 8,
            "options": {"hosts": 4, "racks": 2, "spines": 2, "host_mbps": 1000,
                        "uplink_mbps": 400, "ecn_mark_mbps": 300, "ecn": true, "mtu": 9000,
                        "mirror": "spine-to-leaf"}})");
  const auto back = read_state(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->options.mirror_mode, MirrorMode::local);
  EXPECT_EQ(back->options.mirror_truncate, 0);
  // And static routes, from before --routing.
  EXPECT_EQ(back->options.routing, Routing::static_routes);
  EXPECT_FALSE(back->options.lossless);  // and the kernel forwarding, from before --lossless
}

TEST_F(StateFile, MissingIsNotAnError) {
  EXPECT_FALSE(read_state(path + ".absent"));
}

TEST_F(StateFile, DamageIsNamedWithTheFile) {
  for (const char* text : {"{", R"({"schema_version": 1})", R"({"schema_version": 9})"}) {
    write(text);
    try {
      read_state(path);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace rocehil::testbed
