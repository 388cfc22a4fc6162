#include "rocehil/testbed/options.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {
namespace {

TestbedOptions valid() {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "t1";
  return o;
}

std::string error_of(const TestbedOptions& o) {
  try {
    validate(o);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    return e.what();
  }
  return {};
}

TEST(Options, DefaultsAreValid) {
  EXPECT_EQ(error_of(valid()), "");
}

TEST(Options, DerivedIdIsStableShortAndDiffersByDirectory) {
  const std::string a = derive_id("/tmp/tb-a");
  EXPECT_EQ(a, derive_id("/tmp/tb-a"));
  EXPECT_NE(a, derive_id("/tmp/tb-b"));
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0], 't');
  TestbedOptions o = valid();
  o.id = a;
  EXPECT_EQ(error_of(o), "");
}

TEST(Options, IdMustFitInterfaceNames) {
  for (const char* bad : {"", "T1", "1ab", "abcdefg", "a-b", "a b"}) {
    TestbedOptions o = valid();
    o.id = bad;
    EXPECT_NE(error_of(o).find("--id"), std::string::npos) << bad;
  }
  TestbedOptions o = valid();
  o.id = "abc123";
  EXPECT_EQ(error_of(o), "");
}

TEST(Options, EachRangeNamesItsOption) {
  struct Case {
    void (*change)(TestbedOptions&);
    const char* option;
  };
  const Case cases[] = {
      {[](TestbedOptions& o) { o.hosts = 0; }, "--hosts 0"},
      {[](TestbedOptions& o) { o.hosts = max_hosts + 1; }, "--hosts"},
      {[](TestbedOptions& o) { o.racks = 0; }, "--racks 0"},
      {[](TestbedOptions& o) { o.racks = 5; }, "--racks 5 is more than --hosts 4"},
      {[](TestbedOptions& o) {
         o.hosts = 250;
         o.racks = 1;
       },
       "--hosts 250 in --racks 1 puts more than 244 hosts in a rack"},
      {[](TestbedOptions& o) { o.spines = 0; }, "--spines 0"},
      {[](TestbedOptions& o) { o.host_mbps = -1; }, "--host-mbps"},
      {[](TestbedOptions& o) { o.uplink_mbps = -5; }, "--uplink-mbps"},
      {[](TestbedOptions& o) { o.ecn_mark_mbps = 0; }, "--ecn-mark-mbps"},
      {[](TestbedOptions& o) { o.mtu = 100; }, "--mtu"},
      {[](TestbedOptions& o) { o.dir = "/tmp/with space"; }, "--dir"},
      {[](TestbedOptions& o) { o.dir = "/tmp/quote'"; }, "--dir"},
      {[](TestbedOptions& o) { o.bfd.interval_ms = 5; }, "--bfd-interval-ms 5"},
      {[](TestbedOptions& o) { o.bfd.multiplier = 1; }, "--bfd-multiplier 1"},
  };
  for (const auto& c : cases) {
    TestbedOptions o = valid();
    c.change(o);
    EXPECT_NE(error_of(o).find(c.option), std::string::npos) << c.option << ": " << error_of(o);
  }
}

TEST(Options, RoutingByName) {
  EXPECT_EQ(TestbedOptions{}.routing, Routing::static_routes);
  EXPECT_EQ(parse_routing("static"), Routing::static_routes);
  EXPECT_EQ(parse_routing("bgp"), Routing::bgp);
  for (auto r : {Routing::static_routes, Routing::bgp}) EXPECT_EQ(parse_routing(to_string(r)), r);
  for (const char* bad : {"", "BGP", "ospf", "static_routes"}) {
    try {
      parse_routing(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      EXPECT_TRUE(std::string(e.what()).starts_with("--routing '" + std::string(bad) + "'"))
          << e.what();
    }
  }
}

TEST(Options, MirrorModesByName) {
  EXPECT_EQ(parse_mirror_mode("local"), MirrorMode::local);
  EXPECT_EQ(parse_mirror_mode("erspan"), MirrorMode::erspan3);
  EXPECT_EQ(parse_mirror_mode("erspan2"), MirrorMode::erspan2);
  EXPECT_EQ(parse_mirror_mode("gre"), MirrorMode::gre);
  for (auto m : {MirrorMode::local, MirrorMode::erspan3, MirrorMode::erspan2, MirrorMode::gre})
    EXPECT_EQ(parse_mirror_mode(to_string(m)), m);
  for (const char* bad : {"", "ERSPAN", "erspan3", "gretap", "remote"}) {
    try {
      parse_mirror_mode(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      EXPECT_TRUE(what.starts_with("--mirror-mode '" + std::string(bad) + "'")) << what;
      for (const char* choice : {"local", "erspan", "erspan2", "gre"})
        EXPECT_NE(what.find(choice), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
}

TEST(Options, TruncationIsForRemoteMirrorsAndKeepsAnEthernetHeader) {
  TestbedOptions o = valid();
  o.mirror_truncate = 128;
  EXPECT_NE(error_of(o).find("--mirror-truncate 128 needs --mirror-mode"), std::string::npos)
      << error_of(o);
  for (auto mode : {MirrorMode::erspan3, MirrorMode::erspan2, MirrorMode::gre}) {
    o.mirror_mode = mode;
    o.mirror_truncate = 128;
    EXPECT_EQ(error_of(o), "");
    o.mirror_truncate = 0;
    EXPECT_EQ(error_of(o), "");
    o.mirror_truncate = 14;
    EXPECT_EQ(error_of(o), "");
    for (int bad : {-1, 13, 65536}) {
      o.mirror_truncate = bad;
      EXPECT_NE(error_of(o).find("--mirror-truncate"), std::string::npos) << bad;
    }
  }
}

TEST(Options, NoEcnIgnoresTheMarkingRate) {
  TestbedOptions o = valid();
  o.ecn = false;
  o.ecn_mark_mbps = 0;
  EXPECT_EQ(error_of(o), "");
}

}  // namespace
}  // namespace rocehil::testbed
