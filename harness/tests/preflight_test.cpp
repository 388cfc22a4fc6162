#include "rocehil/harness/preflight.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rocehil::harness {
namespace {

constexpr std::string_view version = "rocehil 0.1.0";

HostFacts connectx() {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data/probe/connectx_host.txt");
  std::ostringstream s;
  s << in.rdbuf();
  return parse_probe_output(s.str());
}

inventory::Nic nic(std::string device, std::string netdev, std::string ip, int gid_index,
                   int gpu = -1) {
  inventory::Nic n;
  n.device = std::move(device);
  n.netdev = std::move(netdev);
  n.ip = std::move(ip);
  n.gid_index = gid_index;
  n.gpu = gpu;
  return n;
}

inventory::Host gpu_host(std::vector<inventory::Nic> nics) {
  inventory::Host h;
  h.name = "gpu001";
  h.address = "10.0.1.1";
  h.agent = "/usr/local/bin/rocehil";
  h.provider = inventory::Provider::verbs;
  h.nics = std::move(nics);
  return h;
}

const CheckItem& find(const std::vector<CheckItem>& items, std::string_view name) {
  for (const auto& i : items)
    if (i.name == name) return i;
  static const CheckItem none{"(none)", CheckStatus::skip, ""};
  ADD_FAILURE() << "no item " << name;
  return none;
}

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(Preflight, HealthyNicPasses) {
  const auto host = gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.1", 3, 0)});
  auto h = host;
  h.nics[0].mtu = 9000;
  const HostFacts f = connectx();
  const auto items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "agent").status, CheckStatus::ok);
  EXPECT_EQ(find(items, "rdma mlx5_0/1").status, CheckStatus::ok);
  EXPECT_EQ(find(items, "gid mlx5_0/1/3").status, CheckStatus::ok);
  EXPECT_EQ(find(items, "netdev ens1f0np0").status, CheckStatus::ok);
  EXPECT_TRUE(contains(find(items, "netdev ens1f0np0").detail, "10.10.1.1/31"));
  EXPECT_EQ(find(items, "mtu ens1f0np0").detail, "9000 (RoCE active_mtu 4096)");
  EXPECT_EQ(find(items, "pfc ens1f0np0").detail, "priorities 3 (mlnx_qos), trust dscp");
  EXPECT_EQ(find(items, "ecn ens1f0np0").detail, "roce_np 3 roce_rp 3");
  EXPECT_TRUE(contains(find(items, "firmware mlx5_0").detail, "28.39.1002 (MT_0000000838)"));
  EXPECT_EQ(find(items, "gpu 0-mlx5_0").status, CheckStatus::ok);
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::ok);
}

TEST(Preflight, PortDownGidProblemsAndAffinity) {
  const HostFacts f = connectx();
  // mlx5_1: port DOWN; index 0 is RoCE v1; GPU 1 - mlx5_1 is NODE.
  auto items = evaluate_host(gpu_host({nic("mlx5_1", "ens2f0np0", "10.11.1.1", 0, 1)}), f, version);
  EXPECT_EQ(find(items, "rdma mlx5_1/1").status, CheckStatus::fail);
  EXPECT_TRUE(contains(find(items, "rdma mlx5_1/1").detail, "port 1 is DOWN"));
  EXPECT_EQ(find(items, "gid mlx5_1/1/0").detail.rfind("is IB/RoCE v1", 0), 0u);
  EXPECT_EQ(find(items, "netdev ens2f0np0").status, CheckStatus::fail);
  EXPECT_EQ(find(items, "gpu 1-mlx5_1").status, CheckStatus::warn);
  EXPECT_EQ(find(items, "pfc ens2f0np0").status, CheckStatus::warn);

  // On mlx5_0 index 2 is the v1 GID of the right address: the v2 one at 3 is suggested.
  items = evaluate_host(gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.1", 2, 1)}), f, version);
  EXPECT_EQ(find(items, "gid mlx5_0/1/2").detail, "is IB/RoCE v1; use the RoCE v2 GID at index 3");
  EXPECT_EQ(find(items, "gpu 1-mlx5_0").status, CheckStatus::fail);  // SYS

  // Index past the table, and a GID that carries another address.
  items = evaluate_host(gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.1", 300)}), f, version);
  EXPECT_TRUE(contains(find(items, "gid mlx5_0/1/300").detail, "but port 1 has 255 GIDs"));
  items = evaluate_host(gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.9", 3)}), f, version);
  EXPECT_TRUE(contains(find(items, "gid mlx5_0/1/3").detail, "does not carry 10.10.1.9"));
  EXPECT_TRUE(contains(find(items, "netdev ens1f0np0").detail, "does not carry 10.10.1.9"));
  // No gid_index: the one carrying the address is found.
  items = evaluate_host(gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.1", -1)}), f, version);
  EXPECT_EQ(find(items, "gid mlx5_0/1").detail, "RoCE v2 GID for 10.10.1.1 is index 3");
  EXPECT_EQ(verdict_of(gpu_host({}), f, items), HostVerdict::ok);

  items = evaluate_host(gpu_host({nic("mlx5_7", "", "10.10.1.1", 3)}), f, version);
  EXPECT_EQ(find(items, "rdma mlx5_7/1").detail,
            "no RDMA device mlx5_7 on gpu001; it has mlx5_0, mlx5_1");
}

TEST(Preflight, AgentAndMtu) {
  HostFacts f = connectx();
  f.agent_version = "rocehil 0.0.9";
  auto h = gpu_host({nic("mlx5_0", "ens1f0np0", "10.10.1.1", 3)});
  h.nics[0].mtu = 4200;
  auto items = evaluate_host(h, f, version);
  EXPECT_EQ(
      find(items, "agent").detail,
      "agent is rocehil 0.0.9, this controller is rocehil 0.1.0; --deploy copies this binary");
  EXPECT_EQ(find(items, "mtu ens1f0np0").detail, "mtu 9000, the inventory says 4200");
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::failed);
  EXPECT_FALSE(contains(find(items, "netdev ens1f0np0").detail, "fail"));
  h.nics[0].link_gbps = 400;
  EXPECT_EQ(find(evaluate_host(h, f, version), "speed ens1f0np0").detail, "400 Gb/s");
  f.netdevs[0].speed_mbps = 200000;
  EXPECT_EQ(find(evaluate_host(h, f, version), "speed ens1f0np0").detail,
            "link is up at 200 Gb/s, the inventory says 400; check the cable, the optic and the "
            "switch port");
  f.agent_version.clear();
  f.agent_problem = "not found";
  items = evaluate_host(h, f, version);
  EXPECT_TRUE(contains(find(items, "agent").detail, "not found at /usr/local/bin/rocehil"));
  h.agent = "rocehil";
  items = evaluate_host(h, f, version);
  EXPECT_TRUE(contains(find(items, "agent").detail, "set 'agent' to an absolute path"));
}

HostFacts soft_facts() {
  HostFacts f;
  f.agent_version = std::string(version);
  NetdevFacts n;
  n.name = "t1-nic0";
  n.mtu = 9000;
  n.operstate = "up";
  n.addresses = {"198.18.1.11/32"};
  f.netdevs = {n};
  return f;
}

TEST(Preflight, SoftOnlyUnlessVerbsIsDemanded) {
  inventory::Host h;
  h.name = "h1";
  h.agent = "/x/rocehil";
  h.provider = inventory::Provider::soft;
  h.nics = {nic("", "t1-nic0", "198.18.1.11", -1)};
  auto items = evaluate_host(h, soft_facts(), version);
  EXPECT_EQ(find(items, "netdev t1-nic0").status, CheckStatus::ok);
  EXPECT_EQ(find(items, "pfc t1-nic0").status, CheckStatus::skip);
  EXPECT_EQ(find(items, "rdma").detail, "no RDMA device: soft only");
  EXPECT_EQ(verdict_of(h, soft_facts(), items), HostVerdict::soft_only);
  h.provider = inventory::Provider::verbs;
  items = evaluate_host(h, soft_facts(), version);
  EXPECT_EQ(find(items, "rdma").status, CheckStatus::fail);
  EXPECT_EQ(verdict_of(h, soft_facts(), items), HostVerdict::failed);
  h.provider = inventory::Provider::soft;
  h.nics[0].netdev = "t1-nic9";
  items = evaluate_host(h, soft_facts(), version);
  EXPECT_EQ(find(items, "netdev t1-nic9").status, CheckStatus::fail);
}

TEST(Preflight, GidCarriesIp) {
  EXPECT_TRUE(gid_carries_ip("0000:0000:0000:0000:0000:ffff:0a0a:0101", "10.10.1.1"));
  EXPECT_FALSE(gid_carries_ip("0000:0000:0000:0000:0000:ffff:0a0a:0101", "10.10.1.2"));
  EXPECT_TRUE(gid_carries_ip("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"));
  EXPECT_FALSE(gid_carries_ip("garbage", "10.10.1.1"));
}

TEST(Preflight, ReportTextAndJson) {
  CheckReport r;
  r.inventory_file = "fabric.yaml";
  r.controller_version = std::string(version);
  HostCheck ok;
  ok.host = "gpu001";
  ok.address = "10.0.1.1";
  ok.ssh_ms = 12.34;
  ok.facts = connectx();
  const auto host = gpu_host(
      {nic("mlx5_0", "ens1f0np0", "10.10.1.1", 3), nic("mlx5_1", "ens2f0np0", "10.11.1.1", 3)});
  ok.items = evaluate_host(host, *ok.facts, version);
  ok.verdict = verdict_of(host, *ok.facts, ok.items);
  HostCheck gone;
  gone.host = "gpu002";
  gone.address = "10.0.1.2";
  gone.verdict = HostVerdict::unreachable;
  gone.unreachable = "ssh: connect to host 10.0.1.2 port 22: Connection refused";
  r.hosts = {ok, gone};
  const std::string text = render_check_text(r);
  EXPECT_TRUE(contains(text, "2 hosts: 0 ok, 0 soft only, 1 failed, 1 unreachable")) << text;
  EXPECT_TRUE(contains(text, "gpu002: unreachable: ssh: connect to host")) << text;
  EXPECT_TRUE(contains(text, "gpu001: fail rdma mlx5_1/1: port 1 is DOWN")) << text;
  EXPECT_TRUE(contains(text, "1/2 active")) << text;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["summary"]["failed"], 1);
  EXPECT_EQ(j["summary"]["unreachable"], 1);
  EXPECT_EQ(j["hosts"][0]["ssh_ms"], 12.3);
  EXPECT_EQ(j["hosts"][0]["verdict"], "failed");
  EXPECT_EQ(j["hosts"][1]["facts"], nullptr);
  EXPECT_EQ(j["hosts"][1]["unreachable"], gone.unreachable);
}

}  // namespace
}  // namespace rocehil::harness
