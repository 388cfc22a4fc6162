// What each verbs NIC is asked to hold (QPs per connection x connections, parts summed) against
// its max_qp from the preflight's probe: more fails the host before any agent starts.
#include "cases/qp_capacity.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rocehil/inventory/load.hpp"
#include "rocehil/traffic/collective.hpp"

namespace rocehil::run::case_traffic {
namespace {

const std::string fabric = R"(schema_version: 1
name: small
defaults:
  agent: /opt/rocehil
  provider: verbs
hosts:
  - name: h1
    address: 10.0.0.1
    nics: [{device: mlx5_0, netdev: eth1, ip: 198.18.1.11, link_gbps: 100}]
  - name: h2
    address: 10.0.0.2
    nics: [{device: mlx5_0, netdev: eth1, ip: 198.18.1.12, link_gbps: 100}]
  - name: h3
    address: 10.0.0.3
    nics: [{device: mlx5_0, netdev: eth1, ip: 198.18.1.13, link_gbps: 100}]
  - name: h4
    address: 10.0.0.4
    nics: [{device: mlx5_0, netdev: eth1, ip: 198.18.1.14, link_gbps: 100}]
)";

struct Loaded {
  inventory::Inventory inventory;
  suites::Suite suite;
};

Loaded load(const std::string& suite_text) {
  auto inv = inventory::parse_inventory(fabric, "fabric.yaml");
  for (const auto& d : inv.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  auto s = suites::parse_suite("schema_version: 1\nname: s\ntests:\n" + suite_text, "s.yaml");
  for (const auto& d : s.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return {inv.inventory.value(), s.suite.value()};
}

std::vector<QpDemand> demands_of(const std::string& suite_text) {
  const Loaded l = load(suite_text);
  return qp_demands(l.inventory, l.suite, suites::expand(l.suite));
}

TEST(QpCapacity, ABwPairAsksItsQpsOfBothEndsAndTheLargestSweptCaseCounts) {
  const auto d =
      demands_of("  - name: p\n    workload: bw\n    hosts: h1,h2\n    qps: [8, 4096]\n");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].host, "h1");
  EXPECT_EQ(d[0].device, "mlx5_0");
  EXPECT_EQ(d[0].qps, 4096u);
  EXPECT_EQ(d[0].case_id, "p/qps=4096");
  EXPECT_EQ(d[1].host, "h2");
  EXPECT_EQ(d[1].qps, 4096u);
}

TEST(QpCapacity, ACollectiveRankAsksPeersTimesQpsAsItsPlanConnectsIt) {
  // Counted independently of qp_demands: the plan's own peers for the four ranks.
  traffic::PlanOptions o;
  o.ranks = 4;
  std::size_t ring = 0, all = 0;
  std::vector<int> peers;
  for (int r = 0; r < 4; ++r) {
    o.pattern = traffic::Pattern::ring_allreduce;
    traffic::make_plan(o)->peers(r, peers);
    ring = std::max(ring, peers.size());
    peers.clear();
    o.pattern = traffic::Pattern::alltoall;
    traffic::make_plan(o)->peers(r, peers);
    all = std::max(all, peers.size());
    peers.clear();
  }
  ASSERT_EQ(ring, 2u);  // next and previous
  ASSERT_EQ(all, 3u);   // every other rank
  auto d = demands_of("  - name: r\n    workload: allreduce\n    qps: 16\n");
  ASSERT_EQ(d.size(), 4u);
  for (const auto& x : d) EXPECT_EQ(x.qps, ring * 16) << x.host;
  EXPECT_EQ(d[0].how, "2 peers x 16 QPs per connection of allreduce");
  d = demands_of("  - name: a\n    workload: alltoall\n    qps: 16\n");
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[3].qps, all * 16);
}

TEST(QpCapacity, PartsAddUpOnANicAndIperf3AsksNone) {
  const auto d = demands_of(
      "  - name: mix\n    parts:\n"
      "      - {name: roce, workload: bw, hosts: 'h1,h2', qps: 100}\n"
      "      - {name: more, workload: bw, hosts: 'h1,h3', qps: 28}\n"
      "      - {name: bg, workload: iperf3, hosts: 'h2,h4'}\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].host, "h1");
  EXPECT_EQ(d[0].qps, 128u);
  EXPECT_EQ(d[0].how, "100 QPs of bw + 28 QPs of bw");
  EXPECT_EQ(d[1].host, "h2");
  EXPECT_EQ(d[1].qps, 100u);
  EXPECT_EQ(d[2].host, "h3");
  EXPECT_EQ(d[2].qps, 28u);
}

preflight::CheckReport report_with(int max_qp) {
  preflight::CheckReport r;
  preflight::HostCheck h;
  h.host = "h1";
  preflight::HostFacts f;
  preflight::RdmaDeviceFacts dev;
  dev.name = "mlx5_0";
  dev.max_qp = max_qp;
  f.rdma.push_back(dev);
  h.facts = f;
  r.hosts.push_back(h);
  return r;
}

TEST(QpCapacity, ANicThatCannotHoldTheLargestCaseFailsItsHostWithWhy) {
  const std::vector<QpDemand> d{{"h1", "mlx5_0", 32768, "r/qps=16384", "2 peers x 16384"}};
  const auto verbs = [](const std::string&) { return std::string("verbs"); };
  auto r = report_with(16384);
  check_qp_capacity(r, d, verbs);
  ASSERT_EQ(r.hosts[0].items.size(), 1u);
  EXPECT_EQ(r.hosts[0].items[0].name, "qps mlx5_0");
  EXPECT_EQ(r.hosts[0].items[0].status, preflight::CheckStatus::fail);
  EXPECT_EQ(r.hosts[0].verdict, preflight::HostVerdict::failed);
  EXPECT_EQ(r.hosts[0].items[0].detail,
            "case r/qps=16384 needs 32768 QPs here (2 peers x 16384), but mlx5_0 holds 16384 "
            "(max_qp, ibv_devinfo -v): lower the test's qps");

  r = report_with(131072);
  check_qp_capacity(r, d, verbs);
  EXPECT_EQ(r.hosts[0].items.at(0).status, preflight::CheckStatus::ok);
  EXPECT_EQ(r.hosts[0].verdict, preflight::HostVerdict::ok);

  // Not known: said, not guessed as 0 and not failed.
  r = report_with(0);
  check_qp_capacity(r, d, verbs);
  EXPECT_EQ(r.hosts[0].items.at(0).status, preflight::CheckStatus::info);

  // A soft host's QPs are the soft provider's, not a device's.
  r = report_with(16);
  check_qp_capacity(r, d, [](const std::string&) { return std::string("soft"); });
  EXPECT_TRUE(r.hosts[0].items.empty());
}

}  // namespace
}  // namespace rocehil::run::case_traffic
