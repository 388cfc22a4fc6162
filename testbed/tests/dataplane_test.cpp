#include <gtest/gtest.h>

#include <vector>

#include "dataplane/packet.hpp"
#include "dataplane/pfc_watchdog.hpp"
#include "dataplane/switch_config.hpp"
#include "dataplane/switchds.hpp"
#include "rocehil/testbed/topology.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/switch_knobs.hpp"

namespace rocehil::testbed::dataplane {
namespace {

// An Ethernet + IPv4 + UDP frame laid out by hand, header checksum from the whole header.
std::vector<std::uint8_t> udp_frame(std::uint8_t tos, std::uint8_t ttl, std::uint16_t sport) {
  std::vector<std::uint8_t> f(14 + 20 + 8 + 16, 0);
  f[12] = 0x08;
  const std::size_t ip = 14;
  f[ip] = 0x45;
  f[ip + 1] = tos;
  const std::size_t total = f.size() - 14;
  f[ip + 2] = static_cast<std::uint8_t>(total >> 8);
  f[ip + 3] = static_cast<std::uint8_t>(total);
  f[ip + 6] = 0x40;  // DF
  f[ip + 8] = ttl;
  f[ip + 9] = 17;
  const std::uint8_t src[4] = {198, 18, 0, 11}, dst[4] = {198, 18, 1, 11};
  std::copy(src, src + 4, f.begin() + ip + 12);
  std::copy(dst, dst + 4, f.begin() + ip + 16);
  f[ip + 20] = static_cast<std::uint8_t>(sport >> 8);
  f[ip + 21] = static_cast<std::uint8_t>(sport);
  f[ip + 22] = 0x12;  // 4791
  f[ip + 23] = 0xb7;
  return f;
}

// The header checksum computed over the whole header: the independent check of the incremental
// updates (a header with a right checksum sums to 0xffff).
std::uint16_t header_sum(const std::vector<std::uint8_t>& f) {
  std::uint32_t sum = 0;
  for (std::size_t i = 14; i < 34; i += 2) sum += static_cast<std::uint32_t>(f[i] << 8 | f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

void fill_checksum(std::vector<std::uint8_t>& f) {
  f[24] = f[25] = 0;
  const std::uint16_t c = static_cast<std::uint16_t>(~header_sum(f));
  f[24] = static_cast<std::uint8_t>(c >> 8);
  f[25] = static_cast<std::uint8_t>(c);
}

TEST(DataplanePacket, ParsesIpv4AndPorts) {
  auto f = udp_frame(0x0e, 64, 49152);  // DSCP 3, ECT(0)
  fill_checksum(f);
  const auto ip = parse_ipv4(f);
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->dscp, 3);
  EXPECT_EQ(ip->ecn, 2);
  EXPECT_EQ(ip->ttl, 64);
  EXPECT_EQ(ip->source, 0xc612000bu);
  EXPECT_EQ(ip->destination, 0xc612010bu);
  EXPECT_EQ(ip->source_port, 49152);
  EXPECT_EQ(ip->destination_port, 4791);
  f.resize(30);  // cut inside the header
  EXPECT_FALSE(parse_ipv4(f));
}

TEST(DataplanePacket, TtlAndCeKeepTheChecksumRight) {
  for (const int tos_value : {0x00, 0x0e, 0x0d, 0xb9, 0xfe}) {
    const auto tos = static_cast<std::uint8_t>(tos_value);
    for (const int ttl_value : {2, 64, 255}) {
      const auto ttl = static_cast<std::uint8_t>(ttl_value);
      auto f = udp_frame(tos, ttl, 1000);
      fill_checksum(f);
      decrement_ttl(f);
      EXPECT_EQ(f[22], ttl - 1);
      EXPECT_EQ(header_sum(f), 0xffff) << "tos " << int(tos) << " ttl " << int(ttl);
      mark_ce(f);
      EXPECT_EQ(f[15] & 3, 3);
      EXPECT_EQ(f[15] >> 2, tos >> 2);
      EXPECT_EQ(header_sum(f), 0xffff) << "tos " << int(tos) << " ttl " << int(ttl);
    }
  }
}

TEST(DataplanePacket, FlowHashIsStablePerFlowAndSpreadsSourcePorts) {
  auto f = udp_frame(0, 64, 0);
  int first_half = 0;
  for (std::uint16_t port = 49152; port < 49152 + 1000; ++port) {
    f[34] = static_cast<std::uint8_t>(port >> 8);
    f[35] = static_cast<std::uint8_t>(port);
    const auto ip = parse_ipv4(f);
    ASSERT_TRUE(ip);
    EXPECT_EQ(flow_hash(*ip, 1), flow_hash(*ip, 1));
    first_half += flow_hash(*ip, 1) % 2 == 0;
  }
  // 1000 fair coin flips land within 450-550 with probability above 99.8%.
  EXPECT_GT(first_half, 450);
  EXPECT_LT(first_half, 550);
}

TEST(DataplanePacket, PfcFrameAsIeee8021QbbLaysItOut) {
  std::array<std::uint8_t, min_frame> frame{};
  std::array<std::uint16_t, 8> quanta{};
  quanta[3] = 0xffff;
  const Mac source{0x02, 0, 0, 0, 0, 1};
  ASSERT_EQ(build_pfc(frame, source, 0x08, quanta), 60u);
  const std::array<std::uint8_t, 20> head = {0x01, 0x80, 0xc2, 0,    0,    0x01, 0x02, 0,    0, 0,
                                             0,    1,    0x88, 0x08, 0x01, 0x01, 0,    0x08, 0, 0};
  EXPECT_TRUE(std::equal(head.begin(), head.end(), frame.begin()));
  EXPECT_EQ(frame[18 + 6], 0xff);
  EXPECT_EQ(frame[18 + 7], 0xff);
  const auto parsed = parse_pause(frame);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->priority_flow_control);
  EXPECT_EQ(parsed->enable, 0x08);
  EXPECT_EQ(parsed->quanta, quanta);
}

TEST(DataplanePacket, Ieee8023xPauseHoldsEveryPriority) {
  std::vector<std::uint8_t> f(60, 0);
  f[12] = 0x88;
  f[13] = 0x08;
  f[15] = 0x01;
  f[16] = 0x01;
  f[17] = 0x00;
  const auto parsed = parse_pause(f);
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(parsed->priority_flow_control);
  EXPECT_EQ(parsed->enable, 0xff);
  for (auto q : parsed->quanta) EXPECT_EQ(q, 256);
}

TEST(DataplanePacket, ArpRequestRoundTrips) {
  std::array<std::uint8_t, min_frame> frame{};
  const Mac mac{0x02, 1, 2, 3, 4, 5};
  build_arp_request(frame, mac, 0xc6120001u, 0xc612000bu);
  EXPECT_EQ(frame[0], 0xff);
  const auto arp = parse_arp(frame);
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->operation, 1);
  EXPECT_EQ(arp->sender_mac, mac);
  EXPECT_EQ(arp->sender_address, 0xc6120001u);
  EXPECT_EQ(arp->target_address, 0xc612000bu);
}

TEST(DataplaneWatchdog, DetectsAfterDetectionTimeAndRestoresAfterQuiet) {
  PfcWatchdog w(2, 200, 300);
  w.pfc_received(1, 3, 0);
  EXPECT_EQ(w.check(1, 3, true, 0), PfcWatchdog::Event::none);
  EXPECT_EQ(w.next_check_ns(1, 3), 200u);
  EXPECT_EQ(w.check(1, 3, true, 199), PfcWatchdog::Event::none);
  EXPECT_EQ(w.check(1, 3, true, 200), PfcWatchdog::Event::storm_detected);
  EXPECT_TRUE(w.storm(1, 3));
  EXPECT_FALSE(w.storm(0, 3));
  w.pfc_received(1, 3, 250);  // the storm goes on
  EXPECT_EQ(w.check(1, 3, false, 500), PfcWatchdog::Event::none);
  EXPECT_EQ(w.next_check_ns(1, 3), 550u);
  EXPECT_EQ(w.check(1, 3, false, 550), PfcWatchdog::Event::restored);
  EXPECT_FALSE(w.storm(1, 3));
}

TEST(DataplaneWatchdog, AQueueThatMovesIsNeverAStorm) {
  PfcWatchdog w(1, 200, 200);
  EXPECT_EQ(w.check(0, 4, true, 0), PfcWatchdog::Event::none);
  EXPECT_EQ(w.check(0, 4, false, 150), PfcWatchdog::Event::none);  // it sent: the clock restarts
  EXPECT_EQ(w.check(0, 4, true, 160), PfcWatchdog::Event::none);
  EXPECT_EQ(w.check(0, 4, true, 300), PfcWatchdog::Event::none);
  EXPECT_EQ(w.check(0, 4, true, 360), PfcWatchdog::Event::storm_detected);
  PfcWatchdog off(1, 0, 200);
  EXPECT_EQ(off.check(0, 4, true, 0), PfcWatchdog::Event::none);
  EXPECT_EQ(off.check(0, 4, true, 1'000'000'000), PfcWatchdog::Event::none);
}

TEST(DataplaneConfig, RoundTripsAndNamesTheFieldOnError) {
  SwitchConfig c;
  c.name = "l0";
  c.ecmp_seed = 7;
  c.counters_path = "/run/rocehil/x.counters";
  c.ports = {{"t1-l0-h0", 1000}, {"t1-l0-s0", 400}};
  c.knobs = with_knob(c.knobs, "switch.pfc_priorities", "3");
  c.knobs = with_knob(c.knobs, "switch.dscp_to_tc", "26:3");
  const SwitchConfig back = parse_switch_config(to_json_text(c), "f.json");
  EXPECT_EQ(back.name, "l0");
  EXPECT_EQ(back.ecmp_seed, 7u);
  ASSERT_EQ(back.ports.size(), 2u);
  EXPECT_EQ(back.ports[1].ifname, "t1-l0-s0");
  EXPECT_EQ(back.ports[1].mbps, 400);
  EXPECT_EQ(back.knobs.pfc_priorities, std::vector<int>{3});
  EXPECT_EQ(dscp_map(back.knobs)[26], 3);
  EXPECT_EQ(dscp_map(back.knobs)[46], 5);  // SONiC's map under the pairs
  try {
    parse_switch_config(R"({"name":"l0","ecmp_seed":1,"counters_path":"x"})", "f.json");
    FAIL() << "no ports";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("ports"), std::string::npos);
  }
}

TEST(DataplaneConfig, ProfileFollowsTheKnobs) {
  SwitchKnobs k;
  auto p = port_profile(k, 1000, 500'000);
  EXPECT_TRUE(p.queues[3].lossless);
  EXPECT_TRUE(p.queues[4].lossless);
  EXPECT_FALSE(p.queues[0].lossless);
  EXPECT_TRUE(p.queues[6].strict);
  EXPECT_EQ(p.queues[3].wred.kmin_bytes, 50'000u);
  EXPECT_EQ(p.queues[3].wred.kmax_bytes, 200'000u);
  EXPECT_DOUBLE_EQ(p.queues[3].wred.pmax, 0.20);
  EXPECT_LT(p.queues[3].wred.kmax_bytes, p.xoff_bytes);  // ECN before PFC
  EXPECT_EQ(p.xoff_bytes, 250'000u);
  EXPECT_LT(p.xon_bytes, p.xoff_bytes);
  EXPECT_EQ(p.headroom_bytes, 500'000u);
  k = with_knob(k, "switch.ecn_enable", "0");
  k = with_knob(k, "switch.pfc_priorities", "");
  p = port_profile(k, 1000, 500'000);
  EXPECT_FALSE(p.queues[3].lossless);
  EXPECT_FALSE(p.queues[3].wred.ecn);
}

TEST(DataplaneConfig, ASwitchForwardsOnItsFabricPortsAtTheirRates) {
  TestbedOptions o;
  o.dir = "/tmp/tb";
  o.id = "t1";
  o.lossless = true;
  o.ecmp_seed = 9;
  o.knobs = with_knob(o.knobs, "switch.xoff_kb", "300");
  const Topology t = build_topology(o, 8);
  const SwitchConfig leaf = switch_config(*t.find("l1"), o, "/run/x.counters");
  EXPECT_EQ(leaf.name, "l1");
  EXPECT_EQ(leaf.ecmp_seed, 9u);
  EXPECT_EQ(leaf.knobs.xoff_kb, 300);
  std::vector<std::pair<std::string, int>> ports;
  for (const auto& p : leaf.ports) ports.emplace_back(p.ifname, p.mbps);
  // Its hosts at the host rate, its uplinks at the uplink rate; never the management port.
  EXPECT_EQ(ports, (std::vector<std::pair<std::string, int>>{
                       {"t1-h1", 1000}, {"t1-h2", 1000}, {"t1-s1", 400}, {"t1-s2", 400}}));
  // A spine's mirror port carries copies, not traffic it forwards.
  const SwitchConfig spine = switch_config(*t.find("s1"), o, "/run/y.counters");
  ASSERT_EQ(spine.ports.size(), 2u);
  EXPECT_EQ(spine.ports[0].ifname, "t1-l1");
  EXPECT_EQ(spine.ports[1].ifname, "t1-l2");
}

TEST(SwitchKnobs, RefuseWhatIsOutOfRangeNamingTheSetting) {
  const SwitchKnobs k;
  const auto refused = [&](std::string_view name, std::string_view text) {
    try {
      with_knob(k, name, text);
    } catch (const Error& e) {
      return std::string(e.what()).find(name) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused("switch.ecn_enable", "2"));
  EXPECT_TRUE(refused("switch.pfc_priorities", "3,8"));
  EXPECT_TRUE(refused("switch.pfc_priorities", "3,3"));
  EXPECT_TRUE(refused("switch.wred_kmin_kb", "600"));  // above kmax 200
  EXPECT_TRUE(refused("switch.wred_pmax_percent", "101"));
  EXPECT_TRUE(refused("switch.dscp_to_tc", "64:3"));
  EXPECT_TRUE(refused("switch.dscp_to_tc", "3-3"));
  EXPECT_TRUE(refused("switch.xoff_kb", "abc"));
  EXPECT_TRUE(refused("switch.nonsense", "1"));
  EXPECT_EQ(knob_text(with_knob(k, "switch.pfc_priorities", "4,3"), "switch.pfc_priorities"),
            "3,4");
  EXPECT_EQ(knob_text(with_knob(k, "switch.xoff_kb", "300"), "switch.xoff_kb"), "300");
}

}  // namespace
}  // namespace rocehil::testbed::dataplane
