// The soft NIC's pause-frame parser and pause timing. Frames come three ways: written byte by
// byte from 802.1Qbb and 802.3 here, built by capture's frame builder (the one `rocehil inject`
// sends), and built by scapy, an implementation outside the project.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/provider.hpp"
#include "soft/pause_frame.hpp"
#include "soft/priority_pause.hpp"

namespace rocehil::traffic::soft {
namespace {

std::vector<std::uint8_t> ethernet(std::uint16_t ethertype, std::vector<std::uint8_t> payload) {
  std::vector<std::uint8_t> f = {0x01,
                                 0x80,
                                 0xc2,
                                 0,
                                 0,
                                 0x01,
                                 0x02,
                                 0,
                                 0,
                                 0,
                                 0,
                                 0x07,
                                 static_cast<std::uint8_t>(ethertype >> 8),
                                 static_cast<std::uint8_t>(ethertype)};
  f.insert(f.end(), payload.begin(), payload.end());
  f.resize(std::max<std::size_t>(f.size(), 60), 0);  // minimum frame without FCS
  return f;
}

TEST(PauseFrame, ReadsAPfcFrameWrittenByHand) {
  // Opcode 0x0101, class-enable 0x0018 (priorities 3 and 4), then quanta for 0..7.
  const auto frame = ethernet(
      0x8808, {0x01, 0x01, 0x00, 0x18, 0, 1, 0, 2, 0, 3, 0xff, 0xff, 0x12, 0x34, 0, 6, 0, 7, 0, 8});
  const auto r = parse_pause_frame(frame);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->link_pause);
  EXPECT_EQ(r->priorities, 0x18);
  EXPECT_EQ(r->quanta[3], 0xffff);
  EXPECT_EQ(r->quanta[4], 0x1234);
  EXPECT_EQ(r->quanta[0], 1);
  EXPECT_EQ(r->quanta[7], 8);
}

TEST(PauseFrame, AnIeee8023xPauseStopsEveryPriority) {
  const auto r = parse_pause_frame(ethernet(0x8808, {0x00, 0x01, 0x02, 0x00}));
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->link_pause);
  EXPECT_EQ(r->priorities, 0xff);
  for (const auto q : r->quanta) EXPECT_EQ(q, 0x200);
}

TEST(PauseFrame, TheReservedOctetOfTheClassVectorIsIgnored) {
  const auto r = parse_pause_frame(ethernet(0x8808, {0x01, 0x01, 0xff, 0x01, 0, 9}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->priorities, 0x01);
  EXPECT_EQ(r->quanta[0], 9);
}

TEST(PauseFrame, RefusesWhatIsNotAPauseRequest) {
  EXPECT_FALSE(parse_pause_frame(ethernet(0x0800, {0x01, 0x01, 0, 0x08})));  // IPv4
  EXPECT_FALSE(parse_pause_frame(ethernet(0x8808, {0x00, 0x02, 0, 0x08})));  // another opcode
  // Cut short: a PFC frame needs its 8 quanta, a PAUSE its one.
  auto pfc = ethernet(0x8808, {0x01, 0x01, 0, 0x08});
  pfc.resize(14 + 19);
  EXPECT_FALSE(parse_pause_frame(pfc));
  pfc.resize(14 + 20);
  EXPECT_TRUE(parse_pause_frame(pfc));
  auto pause = ethernet(0x8808, {0x00, 0x01, 0, 5});
  pause.resize(14 + 3);
  EXPECT_FALSE(parse_pause_frame(pause));
  EXPECT_FALSE(parse_pause_frame({}));
}

TEST(PauseFrame, AgreesWithTheFramesRocehilInjectSends) {
  const std::array<std::uint16_t, 8> quanta{0, 0, 0, 0xffff, 77, 0, 0, 0};
  const auto r = parse_pause_frame(capture::build_pfc(0x18, quanta));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->priorities, 0x18);
  EXPECT_EQ(r->quanta, quanta);
  const auto p = parse_pause_frame(capture::build_pause(300));
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->link_pause);
  EXPECT_EQ(p->quanta[5], 300);
}

// Frames scapy builds (scapy.contrib.mac_control), read back from its hex output.
std::vector<std::uint8_t> scapy_frame(const std::string& layer) {
  const std::string command =
      "/usr/bin/python3 -c \"from scapy.all import Ether, raw; "
      "from scapy.contrib.mac_control import MACControlClassBasedFlowControl, MACControlPause; "
      "print(raw(Ether(src='02:00:00:00:00:01', dst='01:80:c2:00:00:01')/" +
      layer + ").hex())\" 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string hex;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) hex += buffer;
  ::pclose(pipe);
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i + 1 < hex.size() && hex[i] != '\n'; i += 2)
    bytes.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

TEST(PauseFrame, AgreesWithScapy) {
  const auto pfc = scapy_frame(
      "MACControlClassBasedFlowControl(c3_enabled=1, c3_pause_time=0xffff, c6_enabled=1, "
      "c6_pause_time=42)");
  if (pfc.empty()) GTEST_SKIP() << "scapy is not installed for /usr/bin/python3";
  const auto r = parse_pause_frame(pfc);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->link_pause);
  EXPECT_EQ(r->priorities, (1u << 3) | (1u << 6));
  EXPECT_EQ(r->quanta[3], 0xffff);
  EXPECT_EQ(r->quanta[6], 42);
  const auto pause = parse_pause_frame(scapy_frame("MACControlPause(pause_time=4660)"));
  ASSERT_TRUE(pause.has_value());
  EXPECT_TRUE(pause->link_pause);
  EXPECT_EQ(pause->quanta[0], 4660);
}

PauseRequest pfc(unsigned priority, std::uint16_t quanta) {
  PauseRequest r;
  r.priorities = static_cast<std::uint8_t>(1u << priority);
  r.quanta[priority] = quanta;
  return r;
}

TEST(PriorityPause, AQuantumIs512BitTimesAtThePortSpeed) {
  EXPECT_EQ(PriorityPause(100).pause_ns(0xffff), 335'539);  // 335.5 us at 100G
  EXPECT_EQ(PriorityPause(1).pause_ns(1), 512);
  EXPECT_EQ(PriorityPause(0.05).pause_ns(0xffff), 671'078'400);
}

TEST(PriorityPause, PausesOnlyTheNamedPriorityForItsTime) {
  PriorityPause port(1);  // 512 ns a quantum
  port.on_frame(pfc(3, 1000), 10'000);
  EXPECT_TRUE(port.paused(3, 10'000));
  EXPECT_TRUE(port.paused(3, 10'000 + 512'000 - 1));
  EXPECT_FALSE(port.paused(3, 10'000 + 512'000));
  EXPECT_FALSE(port.paused(4, 10'000));
  EXPECT_EQ(port.resumes_at(3), 10'000u + 512'000);
  EXPECT_EQ(port.frames(3), 1u);
  EXPECT_EQ(port.frames(4), 0u);
  EXPECT_EQ(port.paused_ns(3, 100'000), 90'000u);  // in force: counted up to now
  EXPECT_EQ(port.paused_ns(3, 10'000'000), 512'000u);
}

TEST(PriorityPause, ARefreshRestartsTheTimerAndXonEndsItAtOnce) {
  PriorityPause port(1);
  port.on_frame(pfc(3, 1000), 0);
  port.on_frame(pfc(3, 1000), 400'000);  // before the first ends: from here
  EXPECT_TRUE(port.paused(3, 900'000));
  EXPECT_EQ(port.resumes_at(3), 912'000u);
  port.on_frame(pfc(3, 0), 500'000);  // XON
  EXPECT_FALSE(port.paused(3, 500'000));
  EXPECT_EQ(port.frames(3), 3u);
  EXPECT_EQ(port.paused_ns(3, 2'000'000), 500'000u);
  // A later pause adds to the total.
  port.on_frame(pfc(3, 10), 3'000'000);
  EXPECT_EQ(port.paused_ns(3, 4'000'000), 500'000u + 5'120);
  // XON while not paused changes nothing but the count.
  port.on_frame(pfc(3, 0), 5'000'000);
  EXPECT_EQ(port.paused_ns(3, 6'000'000), 500'000u + 5'120);
  EXPECT_EQ(port.frames(3), 5u);
}

TEST(PriorityPause, AnIeee8023xPausePausesAllAndCountsOnce) {
  PriorityPause port(10);
  PauseRequest r;
  r.link_pause = true;
  r.priorities = 0xff;
  r.quanta.fill(100);  // 5120 ns at 10G
  port.on_frame(r, 1000);
  for (std::size_t p = 0; p < PriorityPause::priorities; ++p) {
    EXPECT_TRUE(port.paused(p, 6119));
    EXPECT_FALSE(port.paused(p, 6120));
    EXPECT_EQ(port.frames(p), 1u);
  }
  EXPECT_EQ(port.link_pause_frames(), 1u);
}

TEST(PriorityPause, APriorityWithoutPfcCountsTheFrameAndKeepsSending) {
  PriorityPause port(1, 1u << 4);  // PFC on priority 4 only: `mlnx_qos --pfc 0,0,0,0,1,0,0,0`
  port.on_frame(pfc(3, 1000), 0);
  port.on_frame(pfc(4, 1000), 0);
  EXPECT_FALSE(port.paused(3, 1));
  EXPECT_TRUE(port.paused(4, 1));
  EXPECT_EQ(port.frames(3), 1u);  // it arrived
  EXPECT_EQ(port.paused_ns(3, 2'000'000), 0u);
  EXPECT_EQ(port.paused_ns(4, 2'000'000), 512'000u);
  // No PFC at all (a ConnectX's firmware default): nothing pauses, not even 802.3x PAUSE.
  PriorityPause off(1, 0);
  PauseRequest r;
  r.link_pause = true;
  r.priorities = 0xff;
  r.quanta.fill(100);
  off.on_frame(r, 0);
  for (std::size_t p = 0; p < PriorityPause::priorities; ++p) EXPECT_FALSE(off.paused(p, 1));
  EXPECT_EQ(off.link_pause_frames(), 1u);
}

TEST(SoftPriorityMap, TheDefaultIsDscpOverEightAndAPriorityAbove7IsRefused) {
  const auto map = default_dscp_to_priority();
  EXPECT_EQ(map[0], 0);
  EXPECT_EQ(map[26], 3);  // RoCE's usual DSCP
  EXPECT_EQ(map[48], 6);  // the CNP DSCP
  EXPECT_EQ(map[63], 7);
  ProviderOptions options;
  options.address = "127.0.0.1";
  options.dscp_to_priority[26] = 8;
  try {
    make_provider("soft", options);
    ADD_FAILURE() << "a DSCP map naming priority 8 was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("priority 8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rocehil::traffic::soft
