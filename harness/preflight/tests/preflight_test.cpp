#include "rocehil/preflight/preflight.hpp"
#include "preflight_samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rocehil::preflight {
namespace {

using namespace samples;

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
  EXPECT_EQ(find(items, "agent").detail,
            "agent is rocehil 0.0.9, this controller is rocehil 0.1.0; --deploy installs this "
            "version's package (--deploy=binary copies this binary)");
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

std::vector<std::string> names(const std::vector<CheckItem>& items) {
  std::vector<std::string> out;
  for (const auto& i : items) out.push_back(i.name);
  return out;
}

TEST(Preflight, ReportJson) {
  const CheckReport r = two_host_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["summary"]["failed"], 1);
  EXPECT_EQ(j["summary"]["unreachable"], 1);
  EXPECT_EQ(j["hosts"][0]["ssh_ms"], 12.3);
  EXPECT_EQ(j["hosts"][0]["verdict"], "failed");
  EXPECT_EQ(j["hosts"][1]["facts"], nullptr);
  EXPECT_EQ(j["hosts"][1]["unreachable"], r.hosts[1].unreachable);
}

TEST(Preflight, FourHostReportJson) {
  const CheckReport r = four_host_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["inventory"], "fabric.yaml");
  EXPECT_EQ(j["name"], "lab");
  EXPECT_EQ(j["selection"], "all");
  EXPECT_EQ(j["controller_version"], "rocehil 0.1.0");
  EXPECT_EQ(j["summary"],
            (nlohmann::json{{"ok", 2}, {"soft_only", 1}, {"failed", 0}, {"unreachable", 1}}));
  ASSERT_EQ(j["hosts"].size(), 4u);
  EXPECT_EQ(j["hosts"][0]["name"], "gpu002");
  EXPECT_EQ(j["hosts"][0]["address"], "10.0.1.2");
  EXPECT_EQ(j["hosts"][0]["ssh_ms"], 12.0);
  EXPECT_FALSE(j["hosts"][0].contains("unreachable"));
  EXPECT_EQ(j["hosts"][0]["checks"][0],
            (nlohmann::json{{"name", "agent"}, {"status", "ok"}, {"detail", "rocehil 0.1.0"}}));
  EXPECT_EQ(j["hosts"][0]["facts"]["netdevs"][0]["pfc"], nlohmann::json::array({3}));
  EXPECT_EQ(j["hosts"][2]["verdict"], "soft only");
  EXPECT_EQ(j["hosts"][2]["ssh_ms"], 1.3);
  EXPECT_EQ(j["hosts"][3]["verdict"], "unreachable");
  EXPECT_EQ(j["hosts"][3]["checks"], nlohmann::json::array());
  EXPECT_EQ(j["hosts"][3]["facts"], nullptr);
}

TEST(Preflight, HealthyTwoNicHostHasNothingToReport) {
  const auto h = healthy_inventory();
  const HostFacts f = sample("connectx_healthy.txt");
  const auto items = evaluate_host(h, f, version);
  for (const auto& i : items)
    EXPECT_TRUE(i.status == CheckStatus::ok || i.status == CheckStatus::info)
        << i.name << ": " << to_string(i.status) << " " << i.detail;
  EXPECT_EQ(items.front().name, "agent");
  EXPECT_EQ(items.front().detail, "rocehil 0.1.0");
  const auto n = names(items);
  for (const char* want :
       {"rdma mlx5_0/1", "gid mlx5_0/1/3", "firmware mlx5_0", "netdev ens1f0np0", "mtu ens1f0np0",
        "speed ens1f0np0", "pfc ens1f0np0", "ecn ens1f0np0", "gpu 0-mlx5_0", "rdma mlx5_1/1",
        "gid mlx5_1/1/3", "netdev ens2f0np0", "gpu 1-mlx5_1"})
    EXPECT_NE(std::find(n.begin(), n.end(), want), n.end()) << want;
  EXPECT_EQ(std::find(n.begin(), n.end(), "rdma"), n.end());
  EXPECT_EQ(find(items, "netdev ens2f0np0").detail, "up, 10.11.1.2/31");
  EXPECT_EQ(find(items, "ecn ens2f0np0").detail, "roce_np 3,4 roce_rp 3,4");
  EXPECT_EQ(find(items, "firmware mlx5_1").detail,
            "mlx5_core 24.10-1.1.4, firmware 28.39.2048 (MT_0000000838)");
  EXPECT_EQ(find(items, "gpu 1-mlx5_1").detail, "PIX: same PCIe switch");
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::ok);

  // The GID of an IPv6 address sits at 11, past the slots sysfs lists first.
  auto v6 = h;
  v6.nics = {nic("mlx5_0", "", "2001:db8:100::2", -1)};
  auto v6items = evaluate_host(v6, f, version);
  EXPECT_EQ(find(v6items, "gid mlx5_0/1").detail, "RoCE v2 GID for 2001:db8:100::2 is index 11");
  // No netdev in the inventory: the RDMA device's is checked.
  EXPECT_EQ(find(v6items, "netdev ens1f0np0").status, CheckStatus::fail);
  // Addresses compare as addresses, not as spellings.
  HostFacts with_v6 = f;
  with_v6.netdevs[0].addresses.push_back("2001:db8:100:0::2/64");
  v6.nics[0].ip = "2001:DB8:100::2";
  v6items = evaluate_host(v6, with_v6, version);
  EXPECT_EQ(find(v6items, "netdev ens1f0np0").detail, "up, 2001:db8:100:0::2/64");
  EXPECT_EQ(find(v6items, "gid mlx5_0/1").detail, "RoCE v2 GID for 2001:DB8:100::2 is index 11");
}

TEST(Preflight, AgentThatDoesNotRun) {
  auto h = healthy_inventory();
  HostFacts f = sample("connectx_healthy.txt");
  f.agent_version.clear();
  f.agent_problem =
      "exit 126: timeout: failed to run command '/usr/local/bin/rocehil': Exec format "
      "error";
  auto items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "agent").status, CheckStatus::fail);
  EXPECT_EQ(find(items, "agent").detail,
            "/usr/local/bin/rocehil --version failed (exit 126: timeout: failed to run command "
            "'/usr/local/bin/rocehil': Exec format error); run 'rocehil inventory check FILE "
            "--deploy' to install it there (--deploy=binary copies this binary)");
  f.agent_problem = "not executable";
  items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "agent").detail,
            "not executable at /usr/local/bin/rocehil; run 'rocehil inventory check FILE "
            "--deploy' to install it there (--deploy=binary copies this binary)");
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::failed);
}

TEST(Preflight, DownAndMissingNetdevs) {
  const auto h = healthy_inventory();
  HostFacts f = sample("connectx_healthy.txt");
  f.netdevs[1].operstate = "lowerlayerdown";
  auto items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "netdev ens2f0np0").status, CheckStatus::fail);
  EXPECT_EQ(find(items, "netdev ens2f0np0").detail,
            "is lowerlayerdown; bring it up (ip link set dev ens2f0np0 up) and check the cable");
  f.netdevs[1].operstate = "missing";
  items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "netdev ens2f0np0").detail,
            "ens2f0np0 is not on host gpu002; 'rocehil inventory discover gpu002' lists its "
            "interfaces");
  // No mtu/pfc/ecn items for a netdev that is not there.
  const auto n = names(items);
  EXPECT_EQ(std::find(n.begin(), n.end(), "mtu ens2f0np0"), n.end());
}

TEST(Preflight, QosSettingsWarnOnVerbsHosts) {
  const auto h = healthy_inventory();
  HostFacts f = sample("connectx_healthy.txt");
  f.netdevs[0].ecn_rp = std::array<bool, 8>{};
  f.netdevs[0].pfc = std::array<bool, 8>{};
  const auto items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "pfc ens1f0np0").status, CheckStatus::warn);
  EXPECT_EQ(find(items, "pfc ens1f0np0").detail,
            "no priority has PFC enabled; RoCE without PFC relies on ECN alone");
  EXPECT_EQ(find(items, "ecn ens1f0np0").status, CheckStatus::warn);
  EXPECT_TRUE(contains(find(items, "ecn ens1f0np0").detail, "roce_np 3,4 roce_rp none"));
  // Warnings alone do not fail a host.
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::ok);
  f.nvidia_smi = false;
  EXPECT_EQ(find(evaluate_host(h, f, version), "gpu 0-mlx5_0").detail, "nvidia-smi not installed");
  f.nvidia_smi = true;
  f.gpu_nic.clear();
  EXPECT_EQ(find(evaluate_host(h, f, version), "gpu 0-mlx5_0").status, CheckStatus::warn);
}

TEST(Preflight, TestbedHostFromItsProbe) {
  const HostFacts f = sample("testbed_host.txt");
  auto h = testbed_inventory(inventory::Provider::soft);
  auto items = evaluate_host(h, f, version);
  EXPECT_EQ(find(items, "netdev t1-nic0").detail, "up, 198.18.1.11/24");
  EXPECT_EQ(find(items, "mtu t1-nic0").detail, "9000");
  EXPECT_EQ(find(items, "pfc t1-nic0").detail, "not exposed (no mlnx_qos or dcb on the host)");
  EXPECT_EQ(find(items, "ecn t1-nic0").status, CheckStatus::skip);
  EXPECT_EQ(items.back().name, "rdma");
  EXPECT_EQ(items.back().status, CheckStatus::info);
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::soft_only);
  h = testbed_inventory(inventory::Provider::verbs);
  items = evaluate_host(h, f, version);
  EXPECT_EQ(items.back().name, "rdma");
  EXPECT_EQ(items.back().status, CheckStatus::fail);
  EXPECT_EQ(items.back().detail,
            "no RDMA device on t1, and the inventory asks for the verbs provider; install the "
            "RNIC driver, or set provider: soft for this host");
  EXPECT_EQ(verdict_of(h, f, items), HostVerdict::failed);
}

TEST(Preflight, EnumNames) {
  EXPECT_EQ(to_string(CheckStatus::ok), "ok");
  EXPECT_EQ(to_string(CheckStatus::info), "info");
  EXPECT_EQ(to_string(CheckStatus::warn), "warn");
  EXPECT_EQ(to_string(CheckStatus::fail), "fail");
  EXPECT_EQ(to_string(CheckStatus::skip), "skip");
  EXPECT_EQ(to_string(HostVerdict::ok), "ok");
  EXPECT_EQ(to_string(HostVerdict::soft_only), "soft only");
  EXPECT_EQ(to_string(HostVerdict::failed), "failed");
  EXPECT_EQ(to_string(HostVerdict::unreachable), "unreachable");
}

}  // namespace
}  // namespace rocehil::preflight
