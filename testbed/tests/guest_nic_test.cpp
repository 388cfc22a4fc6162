// A --vm guest's NIC on a lossless fabric: its pure parts (priority of a frame, the transmit
// queues that hold a paused priority and stop taking from the guest, the receive buffer's PFC
// thresholds, QEMU's stream framing), its configuration, and how `up` wires QEMU to it. The
// process itself runs on a real testbed (tests/system/testbed_vm_lossless_test.py).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "guest_nic/guest_nics.hpp"
#include "guest_nic/nic_config.hpp"
#include "guest_nic/nic_queues.hpp"
#include "has_line.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/guest_files.hpp"
#include "rocehil/testbed/scripts.hpp"

namespace rocehil::testbed::guest_nic {
namespace {

// An Ethernet frame carrying an IPv4 header with `dscp` (and ECT(0)), 64 bytes of UDP payload.
std::vector<std::uint8_t> ipv4_frame(int dscp) {
  std::vector<std::uint8_t> f(14 + 20 + 8 + 64, 0);
  f[12] = 0x08;
  f[13] = 0x00;
  f[14] = 0x45;
  f[15] = static_cast<std::uint8_t>(dscp << 2 | 0x02);
  const std::size_t total = f.size() - 14;
  f[16] = static_cast<std::uint8_t>(total >> 8);
  f[17] = static_cast<std::uint8_t>(total);
  f[22] = 64;
  f[23] = 17;
  return f;
}

TEST(GuestNic, APrioritysIsTheDscpsTopThreeBitsAsAConnectXTrustingDscp) {
  EXPECT_EQ(priority_of(ipv4_frame(26)), 3);  // RoCE's usual DSCP
  EXPECT_EQ(priority_of(ipv4_frame(48)), 6);  // CNPs
  EXPECT_EQ(priority_of(ipv4_frame(0)), 0);
  EXPECT_EQ(priority_of(ipv4_frame(63)), 7);
  std::vector<std::uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(priority_of(arp), 0);
  EXPECT_EQ(priority_of(std::vector<std::uint8_t>(10, 0)), 0);  // a runt
}

TEST(GuestNic, APausedPriorityKeepsItsFramesWhileTheOthersGo) {
  TransmitQueues q(1'000'000);
  q.push(3, 30, 1000);
  q.push(3, 31, 1000);
  q.push(0, 1, 500);
  q.push(6, 60, 100);
  const std::uint8_t three = 1u << 3;
  std::vector<int> sent;
  while (auto p = q.pick(three)) {
    sent.push_back(static_cast<int>(q.front(*p)));
    q.pop(*p, *p == 0 ? 500 : 100);
  }
  EXPECT_EQ(sent, (std::vector<int>{1, 60}));
  EXPECT_TRUE(q.holds(3));
  EXPECT_EQ(q.held_bytes(3), 2000u);
  EXPECT_EQ(q.held_bytes(), 2000u);
  // Released, priority 3 sends in its order.
  auto p = q.pick(0);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, 3);
  EXPECT_EQ(q.front(3), 30u);
  q.pop(3, 1000);
  EXPECT_EQ(q.front(3), 31u);
}

TEST(GuestNic, QueuesTakeTurnsFrameByFrame) {
  TransmitQueues q(1'000'000);
  for (std::uint32_t i = 0; i < 3; ++i) {
    q.push(3, 30 + i, 100);
    q.push(4, 40 + i, 100);
  }
  std::vector<std::uint32_t> order;
  while (auto p = q.pick(0)) {
    order.push_back(q.front(*p));
    q.pop(*p, 100);
  }
  EXPECT_EQ(order, (std::vector<std::uint32_t>{30, 40, 31, 41, 32, 42}));
  EXPECT_TRUE(q.empty());
}

TEST(GuestNic, AFullBufferTakesNothingMoreFromTheGuest) {
  TransmitQueues q(3000);
  EXPECT_TRUE(q.has_room());
  q.push(3, 1, 1500);
  EXPECT_TRUE(q.has_room());
  q.push(3, 2, 1500);
  EXPECT_FALSE(q.has_room());  // QEMU's socket is not read: the guest waits
  q.pop(3, 1500);
  EXPECT_TRUE(q.has_room());
}

TEST(GuestNic, TheReceiveBufferPausesOverXoffAndReleasesUnderXon) {
  ReceiveThreshold t(1000, 500);
  EXPECT_EQ(t.held(1000), ReceiveThreshold::Change::none);
  EXPECT_EQ(t.held(1001), ReceiveThreshold::Change::xoff);
  EXPECT_TRUE(t.pausing());
  EXPECT_EQ(t.held(2000), ReceiveThreshold::Change::none);
  EXPECT_EQ(t.held(600), ReceiveThreshold::Change::none);  // between: still pausing
  EXPECT_TRUE(t.pausing());
  EXPECT_EQ(t.held(499), ReceiveThreshold::Change::xon);
  EXPECT_FALSE(t.pausing());
  EXPECT_EQ(t.held(0), ReceiveThreshold::Change::none);
}

// QEMU's stream as net/stream.c writes it: a 4-byte big-endian length, then the frame.
std::vector<std::uint8_t> qemu_stream(const std::vector<std::vector<std::uint8_t>>& frames) {
  std::vector<std::uint8_t> out;
  for (const auto& f : frames) {
    const auto n = static_cast<std::uint32_t>(f.size());
    out.insert(out.end(), {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
                           static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)});
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}

TEST(GuestNic, FramesSplitAcrossReadsComeOutWhole) {
  std::vector<std::vector<std::uint8_t>> frames;
  for (int i = 0; i < 40; ++i) {
    std::vector<std::uint8_t> f(60 + static_cast<std::size_t>(i) * 217 % 9000,
                                static_cast<std::uint8_t>(i));
    frames.push_back(f);
  }
  const std::vector<std::uint8_t> stream = qemu_stream(frames);
  // Every chunk size from 1 byte up, as reads of a nonblocking socket return them.
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{4}, std::size_t{5},
                                  std::size_t{1499}, std::size_t{65536}}) {
    StreamFramer framer;
    std::vector<std::vector<std::uint8_t>> out;
    for (std::size_t at = 0; at < stream.size();) {
      framer.compact();
      const std::size_t n = std::min({chunk, stream.size() - at, framer.space()});
      ASSERT_GT(n, 0u);
      framer.append({stream.data() + at, n});
      at += n;
      for (auto f = framer.next(); !f.empty(); f = framer.next())
        out.emplace_back(f.begin(), f.end());
    }
    EXPECT_FALSE(framer.bad());
    EXPECT_EQ(out, frames) << "chunks of " << chunk;
  }
}

TEST(GuestNic, ALengthQemuNeverWritesStopsTheStream) {
  for (const std::uint32_t length : {0u, 100'000u}) {
    StreamFramer framer;
    const std::array<std::uint8_t, 4> header = stream_header(length);
    framer.append(header);
    EXPECT_TRUE(framer.next().empty());
    EXPECT_TRUE(framer.bad()) << length;
  }
  EXPECT_EQ(stream_header(0x01020304), (std::array<std::uint8_t, 4>{1, 2, 3, 4}));
}

TEST(GuestNic, TheConfigurationRoundTripsAndBadFieldsAreNamed) {
  NicConfig c;
  c.name = "h1";
  c.port = "t1-nic0";
  c.socket_path = "/run/rocehil/rocehil-t1-h1.nic.sock";
  c.counters_path = "/run/rocehil/rocehil-t1-h1.counters";
  c.mbps = 1000;
  c.pfc_priorities = {3, 4};
  const NicConfig back = parse_nic_config(to_json_text(c), "/tb/vm/h1.nic.json");
  EXPECT_EQ(to_json_text(back), to_json_text(c));
  EXPECT_EQ(back.pfc_priorities, (std::vector<int>{3, 4}));

  const auto refused = [](std::string text) {
    try {
      parse_nic_config(text, "/tb/vm/h1.nic.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  std::string text = to_json_text(c);
  std::string bad = text;
  bad.replace(bad.find("[\n    3"), 7, "[\n    9");
  EXPECT_NE(refused(bad).find("/tb/vm/h1.nic.json: pfc_priorities: 9 is not a priority"),
            std::string::npos)
      << refused(bad);
  bad = text;
  bad.replace(bad.find("\"mbps\""), 6, "\"rate\"");
  EXPECT_NE(refused(bad).find("/tb/vm/h1.nic.json: "), std::string::npos);
  EXPECT_NE(refused(bad).find("mbps"), std::string::npos) << refused(bad);
  c.receive_xon_bytes = c.receive_xoff_bytes;
  EXPECT_NE(refused(to_json_text(c)).find("receive_xoff_bytes"), std::string::npos);
}

struct LosslessGuests {
  TestbedOptions o;
  Topology t;
  TestbedPaths paths{"/tmp/tb"};
  LosslessGuests() {
    o.dir = "/tmp/tb";
    o.id = "t1";
    o.vm.enabled = true;
    o.lossless = true;
    o.knobs.pfc_priorities = {3};
    t = build_topology(o, 8);
  }
  const Namespace& ns(std::string_view name) const { return *t.find(name); }
};

TEST(GuestNic, UpGivesEachGuestsNicItsFabricPortRateAndTheSwitchesPfcPriorities) {
  LosslessGuests f;
  const NicConfig c = nic_config(f.ns("h1"), f.o, "/run/rocehil/c");
  EXPECT_EQ(c.port, "t1-nic0");
  EXPECT_EQ(c.mbps, f.o.host_mbps);
  EXPECT_EQ(c.pfc_priorities, (std::vector<int>{3}));
  EXPECT_EQ(c.socket_path, TestbedPaths::guest_nic_socket(f.ns("h1")));
  EXPECT_LT(c.socket_path.size(), 108u);  // a unix socket's path
}

TEST(GuestNic, OnALosslessFabricQemuStreamsToTheNicProcessInsteadOfATap) {
  LosslessGuests f;
  const std::string batch = guest_tap_batch(f.ns("h1"), f.o);
  EXPECT_EQ(batch.find("t1-tnic"), std::string::npos) << batch;
  EXPECT_TRUE(testing::has_line(batch, "link set dev t1-mgmt master t1-bmgmt"));
  const GuestKernel kernel{"6.1.0-56-amd64", "/k/vmlinuz", "/k/modules"};
  const auto argv = qemu_argv(f.ns("h1"), f.t, f.o, f.paths, kernel, GuestAccel::tcg, "");
  const std::string stream = fmt::format("stream,id=nic,server=off,addr.type=unix,addr.path={}",
                                         TestbedPaths::guest_nic_socket(f.ns("h1")));
  EXPECT_NE(std::find(argv.begin(), argv.end(), stream), argv.end());
  // The guest's NIC is paced by the process; its veth keeps a soft host's 1 ms tbf, not the
  // 4 MiB queue a guest behind a tap needs.
  for (const auto& i : f.ns("h1").interfaces) {
    if (i.kind == LinkKind::host) {
      EXPECT_EQ(port_qdisc(f.ns("h1"), i, f.o), tbf_qdisc(i.mbps, f.o.mtu, 1));
    }
  }
}

}  // namespace
}  // namespace rocehil::testbed::guest_nic
