#include "iperf3_test.hpp"

#include <fmt/format.h>

#include <string_view>

namespace rocehil::suites {

namespace {

using inventory::LoadContext;
using inventory::MapReader;

// Each key a test may write that iperf3 has no use for, and why (the message says it).
struct Unused {
  std::string_view key;
  std::string_view why;
};
constexpr Unused unused_keys[] = {
    {"qps", "iperf3 has no queue pairs; parallel connections are 'streams'"},
    {"size", "iperf3 sends a stream, not messages of a size"},
    {"provider", "iperf3 uses the kernel's TCP/UDP, no RDMA provider"},
    {"engine", "iperf3 is its own engine"},
    {"strategy", "QP scaling needs queue pairs"},
    {"placement", "iperf3 runs between the test's first two hosts, not ranks"},
    {"opcode", "iperf3 moves no RDMA operations"},
    {"transport", "iperf3's transport is 'protocol: tcp|udp'"},
    {"memory", "iperf3 sends from host memory"},
    {"iterations", "iperf3 runs for 'duration_s'"},
    {"warmup", "iperf3 runs for 'duration_s' without a warm-up"},
    {"pipeline", "iperf3 is not a collective"},
    {"rounds", "only calibrations run rounds"},
    {"mtu", "the path MTU is the QPs'; iperf3's packets follow the interface's MTU"},
    {"tx_depth", "iperf3 posts no work requests"},
    {"sl", "iperf3 marks its packets by 'traffic_class' (the IP TOS byte), not a VLAN priority"},
};

void read_iperf3_keys(LoadContext& ctx, const MapReader& m, const std::string& owner,
                      Iperf3Settings& out) {
  if (const auto p = m.get("protocol"); p.IsDefined())
    if (const auto v = inventory::read_choice(ctx, p, owner + ": protocol", {"tcp", "udp"}))
      out.protocol = *v;
  if (const auto s = m.get("streams"); s.IsDefined())
    if (const auto v = inventory::read_int(ctx, s, owner + ": streams", 1, 128, "4"))
      out.streams = static_cast<std::uint32_t>(*v);
}

}  // namespace

void check_iperf3_test(LoadContext& ctx, const MapReader& m, const YAML::Node& test_node,
                       const std::string& owner, SuiteTest& t) {
  if (t.workload != "iperf3") {
    for (const std::string_view key : {"protocol", "streams"})
      if (const auto n = m.get(key); n.IsDefined())
        ctx.error(n, fmt::format("{}: {} is a key of workload iperf3, not {}; drop {}", owner, key,
                                 t.workload, key));
    return;
  }
  for (const Unused& u : unused_keys)
    if (const auto n = m.get(u.key); n.IsDefined())
      ctx.error(n, fmt::format("{}: workload iperf3 does not take {} ({}); drop {}", owner, u.key,
                               u.why, u.key));
  read_iperf3_keys(ctx, m, owner, t.settings.iperf3);
  // What `defaults:` gave for the RDMA tests does not apply here (docs/suites.md says so).
  const TestSettings fresh;
  TestSettings& s = t.settings;
  s.provider.clear();
  s.engine = "iperf3";
  s.sizes = fresh.sizes;
  s.qps = fresh.qps;
  s.strategies = fresh.strategies;
  s.placements = fresh.placements;
  s.opcode = fresh.opcode;
  s.transport = fresh.transport;
  s.memory = fresh.memory;
  s.iterations = fresh.iterations;
  s.warmup = fresh.warmup;
  s.pipeline = fresh.pipeline;
  s.rounds = fresh.rounds;
  s.mtu = fresh.mtu;
  s.tx_depth = fresh.tx_depth;
  s.sl = fresh.sl;
  // The RoCE default class (106: DSCP 26, ECT(0)) would put background traffic in the lossless
  // queue: unless a traffic_class was written (here or in defaults), iperf3 sends with TOS 0.
  if (s.traffic_class_where.line == 0) s.traffic_classes = {0};
  if (s.iperf3.protocol == "udp" && !s.rate)
    ctx.error(m.get("protocol").IsDefined() ? m.get("protocol") : test_node,
              fmt::format("{}: protocol udp needs a rate (iperf3 would send 1 Mbit/s unsaid); "
                          "give rate, such as '200Mbit/s' or '10%'",
                          owner));
}

}  // namespace rocehil::suites
