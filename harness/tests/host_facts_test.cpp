#include "rocehil/harness/host_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rocehil/harness/remote_run.hpp"

namespace rocehil::harness {
namespace {

std::string sample(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data/probe" / name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HostFacts, ParsesAConnectXHost) {
  const HostFacts f = parse_probe_output(sample("connectx_host.txt"));
  EXPECT_EQ(f.hostname, "gpu001");
  EXPECT_EQ(f.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(f.agent_version, "rocehil 0.1.0");
  ASSERT_EQ(f.rdma.size(), 2u);
  const RdmaDeviceFacts& d = f.rdma[0];
  EXPECT_EQ(d.name, "mlx5_0");
  EXPECT_EQ(d.fw_ver, "28.39.1002");
  EXPECT_EQ(d.netdev, "ens1f0np0");
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(d.ports[0].link_layer, "Ethernet");
  EXPECT_EQ(d.ports[0].gid_table_len, 255);
  EXPECT_EQ(d.ports[0].active_mtu, 4096);
  ASSERT_EQ(d.ports[0].gids.size(), 4u);
  EXPECT_EQ(d.ports[0].gids[3].index, 3);
  EXPECT_EQ(d.ports[0].gids[3].type, "RoCE v2");
  EXPECT_EQ(d.ports[0].gids[3].gid, "0000:0000:0000:0000:0000:ffff:0a0a:0101");
  EXPECT_EQ(d.ports[0].gids[0].type, "IB/RoCE v1");
  EXPECT_EQ(f.rdma[1].ports[0].state, "DOWN");
  EXPECT_EQ(f.rdma[1].ports[0].active_mtu, 1024);

  ASSERT_EQ(f.netdevs.size(), 2u);
  const NetdevFacts& n = f.netdevs[0];
  EXPECT_EQ(n.mtu, 9000);
  EXPECT_EQ(n.operstate, "up");
  EXPECT_EQ(n.speed_mbps, 400000);
  EXPECT_EQ(n.numa_node, 0);
  EXPECT_EQ(n.addresses, (std::vector<std::string>{"10.10.1.1/31", "fe80::e42:a1ff:fe8c:3a10/64"}));
  EXPECT_EQ(n.driver, "mlx5_core");
  EXPECT_EQ(n.firmware, "28.39.1002 (MT_0000000838)");
  EXPECT_EQ(n.bus_info, "0000:3b:00.0");
  ASSERT_TRUE(n.ecn_np && n.ecn_rp);
  EXPECT_TRUE((*n.ecn_np)[3]);
  EXPECT_FALSE((*n.ecn_rp)[0]);
  ASSERT_TRUE(n.pfc);
  EXPECT_EQ(n.pfc_source, "mlnx_qos");
  EXPECT_EQ(n.trust, "dscp");
  for (std::size_t p = 0; p < 8; ++p) EXPECT_EQ((*n.pfc)[p], p == 3) << p;
  const NetdevFacts& down = f.netdevs[1];
  EXPECT_EQ(down.speed_mbps, -1);
  EXPECT_FALSE(down.ecn_np.has_value());
  ASSERT_TRUE(down.pfc);
  EXPECT_EQ(down.pfc_source, "dcb");
  for (const bool on : *down.pfc) EXPECT_FALSE(on);

  EXPECT_TRUE(f.nvidia_smi);
  ASSERT_EQ(f.gpu_nic.size(), 4u);
  EXPECT_EQ(f.gpu_nic[0].gpu, 0);
  EXPECT_EQ(f.gpu_nic[0].nic, "mlx5_0");
  EXPECT_EQ(f.gpu_nic[0].relation, "PXB");
  EXPECT_EQ(f.gpu_nic[3].gpu, 1);
  EXPECT_EQ(f.gpu_nic[3].nic, "mlx5_1");
  EXPECT_EQ(f.gpu_nic[3].relation, "NODE");
  EXPECT_TRUE(f.notes.empty()) << f.notes.front();

  const nlohmann::json j = to_json(f);
  EXPECT_EQ(j["netdevs"][0]["pfc"], nlohmann::json::array({3}));
  EXPECT_EQ(j["netdevs"][1]["ecn_np"], nullptr);
  EXPECT_EQ(j["rdma"][0]["ports"][0]["gids"][3]["type"], "RoCE v2");
}

TEST(HostFacts, OddOutputBecomesBoundedNotes) {
  std::string junk = "@@ host\n";
  for (int i = 0; i < 100; ++i) junk += "weird " + std::string(500, 'x') + "\n";
  junk += "@@ rdma\nstate before any port\n@@ netdev eth0\nspeed fast\n";
  const HostFacts f = parse_probe_output(junk);
  EXPECT_EQ(f.notes.size(), 20u);
  for (const auto& note : f.notes) EXPECT_LE(note.size(), 200u);
  ASSERT_EQ(f.netdevs.size(), 1u);
  EXPECT_EQ(f.netdevs[0].speed_mbps, -1);
  EXPECT_TRUE(parse_probe_output("").netdevs.empty());
}

// The script itself, run for real by /bin/sh on this machine: loopback is there, the other names
// are not, and no argument is ever executed.
TEST(ProbeScript, RunsHereAndTreatsArgumentsAsData) {
  const std::string mark = "/tmp/rocehil-probe-pwned-" + std::to_string(getpid());
  std::vector<std::string> argv = probe_command(
      "/nonexistent/rocehil",
      {"lo", "nonexistent0", "lo;touch " + mark, "$(touch " + mark + "2)", "../../etc", "-x"});
  argv[0] = "/bin/sh";
  const CommandResult r = run_command(argv, {});
  ASSERT_TRUE(r.succeeded()) << r.reason();
  const HostFacts f = parse_probe_output(r.out);
  EXPECT_FALSE(f.hostname.empty());
  EXPECT_EQ(f.agent_problem, "not found");
  EXPECT_TRUE(f.agent_version.empty());
  ASSERT_GE(f.netdevs.size(), 3u);
  EXPECT_EQ(f.netdevs[0].name, "lo");
  EXPECT_EQ(f.netdevs[0].mtu, 65536);
  EXPECT_EQ(f.netdevs[0].operstate, "unknown");
  EXPECT_NE(std::find(f.netdevs[0].addresses.begin(), f.netdevs[0].addresses.end(), "127.0.0.1/8"),
            f.netdevs[0].addresses.end());
  EXPECT_EQ(f.netdevs[1].name, "nonexistent0");
  EXPECT_EQ(f.netdevs[1].operstate, "missing");
  EXPECT_EQ(f.netdevs[2].name, "invalid");
  EXPECT_FALSE(std::filesystem::exists(mark));
  EXPECT_FALSE(std::filesystem::exists(mark + "2"));
  EXPECT_EQ(r.out.find("pwned"), std::string::npos);
}

TEST(ProbeScript, AgentVersionAndFailures) {
  std::vector<std::string> argv = probe_command("/bin/echo", {});
  argv[0] = "/bin/sh";
  HostFacts f = parse_probe_output(run_command(argv, {}).out);
  EXPECT_FALSE(f.agent_version.empty());  // echo --version prints something and exits 0
  argv = probe_command("false", {});
  argv[0] = "/bin/sh";
  f = parse_probe_output(run_command(argv, {}).out);
  EXPECT_EQ(f.agent_problem.rfind("exit 1", 0), 0u) << f.agent_problem;
  const std::string plain = "/tmp/rocehil-probe-plain-" + std::to_string(getpid());
  std::ofstream(plain) << "not a program\n";
  std::filesystem::permissions(
      plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  argv = probe_command(plain, {});
  argv[0] = "/bin/sh";
  f = parse_probe_output(run_command(argv, {}).out);
  EXPECT_EQ(f.agent_problem, "not executable");
  std::filesystem::remove(plain);
}

}  // namespace
}  // namespace rocehil::harness
