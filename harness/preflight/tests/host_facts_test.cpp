#include "rocehil/preflight/host_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "probe_samples.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::preflight {
namespace {

using testing::probe_sample;

TEST(HostFacts, ParsesAConnectXHost) {
  const HostFacts f = parse_probe_output(probe_sample("connectx_host.txt"));
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
  // mlx5_0's limits as `ibv_devinfo -v` prints them (devinfo.c), through the probe's filter;
  // mlx5_1's section is the unfiltered output without -v: its limits stay unknown, not 0 read.
  EXPECT_EQ(d.max_qp, 131072);
  EXPECT_EQ(d.max_qp_wr, 32768);
  EXPECT_EQ(d.max_cqe, 4194303);
  EXPECT_EQ(f.rdma[1].max_qp, 0);
  const nlohmann::json limits = to_json(f);
  EXPECT_EQ(limits["rdma"][0]["max_qp"], 131072);
  EXPECT_FALSE(limits["rdma"][1].contains("max_qp"));

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
  // DCQCN as MLNX_OFED's sysfs ecn/ exposes it, every parameter under its file's name.
  EXPECT_EQ(n.congestion.size(), 19u);
  EXPECT_EQ(n.congestion.at("roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(n.congestion.at("roce_np/min_time_between_cnps"), "4");
  EXPECT_EQ(n.congestion.at("roce_np/cnp_dscp"), "48");
  EXPECT_EQ(n.prio_buffer, "0,0,0,1,0,0,0,0");
  EXPECT_EQ(n.buffer_sizes, "130944,130944,0,0,0,0,0,0");
  EXPECT_EQ(n.buffer_source, "mlnx_qos");
  const NetdevFacts& down = f.netdevs[1];
  // The upstream driver's debugfs cc_params, and dcb's buffer view.
  EXPECT_EQ(down.congestion.size(), 20u);
  EXPECT_EQ(down.congestion.at("cc_params/rp_time_reset"), "300");
  EXPECT_EQ(down.congestion.at("cc_params/np_cnp_prio"), "6");
  EXPECT_EQ(down.prio_buffer, "0,0,0,0,0,0,0,0");
  EXPECT_EQ(down.buffer_sizes, "262016,0,0,0,0,0,0,0");
  EXPECT_EQ(down.buffer_source, "dcb");
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
  EXPECT_EQ(j["netdevs"][0]["congestion"]["roce_rp/rpg_ai_rate"], "5");
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

// Older nvidia-smi names the NICs in the matrix itself (no NIC legend); the shell lists gids/ in
// name order, so 10 and 11 come before 2.
TEST(HostFacts, OlderNvidiaSmiAndGidOrder) {
  const HostFacts f = parse_probe_output(probe_sample("connectx_healthy.txt"));
  EXPECT_TRUE(f.notes.empty()) << f.notes.front();
  ASSERT_EQ(f.rdma.size(), 2u);
  const auto& gids = f.rdma[0].ports.at(0).gids;
  ASSERT_EQ(gids.size(), 6u);
  for (std::size_t i = 1; i < gids.size(); ++i) EXPECT_LT(gids[i - 1].index, gids[i].index);
  EXPECT_EQ(gids.back().index, 11);
  EXPECT_EQ(gids.back().gid, "2001:0db8:0100:0000:0000:0000:0000:0002");
  EXPECT_EQ(f.rdma[1].ports.at(0).active_mtu, 4096);
  ASSERT_EQ(f.netdevs.size(), 2u);
  EXPECT_EQ(f.netdevs[1].numa_node, 1);
  EXPECT_EQ(f.netdevs[1].driver_version, "24.10-1.1.4");
  ASSERT_TRUE(f.netdevs[1].ecn_rp);
  EXPECT_TRUE((*f.netdevs[1].ecn_rp)[4]);
  ASSERT_EQ(f.gpu_nic.size(), 4u);
  EXPECT_EQ(f.gpu_nic[1].gpu, 0);
  EXPECT_EQ(f.gpu_nic[1].nic, "mlx5_1");
  EXPECT_EQ(f.gpu_nic[1].relation, "SYS");
  EXPECT_EQ(f.gpu_nic[3].nic, "mlx5_1");
  EXPECT_EQ(f.gpu_nic[3].relation, "PIX");
  const nlohmann::json j = to_json(f);
  EXPECT_EQ(j["netdevs"][0]["ecn_np"], nlohmann::json::array({3, 4}));
  EXPECT_EQ(j["gpu_nic"][3]["relation"], "PIX");
}

// A testbed namespace: one veth, no RDMA device, dcb installed but with nothing to say.
TEST(HostFacts, TestbedVeth) {
  const HostFacts f = parse_probe_output(probe_sample("testbed_host.txt"));
  EXPECT_TRUE(f.notes.empty()) << f.notes.front();
  EXPECT_TRUE(f.rdma.empty());
  EXPECT_FALSE(f.nvidia_smi);
  ASSERT_EQ(f.netdevs.size(), 1u);
  const NetdevFacts& n = f.netdevs[0];
  EXPECT_EQ(n.name, "t1-nic0");
  EXPECT_EQ(n.speed_mbps, 10000);
  EXPECT_EQ(n.numa_node, -1);
  EXPECT_EQ(n.driver, "veth");
  EXPECT_EQ(n.firmware, "");
  EXPECT_FALSE(n.pfc.has_value());
  EXPECT_EQ(n.pfc_source, "");
  const nlohmann::json j = to_json(f);
  EXPECT_EQ(j["netdevs"][0]["pfc"], nullptr);
  EXPECT_EQ(j["netdevs"][0]["addresses"][0], "198.18.1.11/24");
  EXPECT_EQ(j["rdma"], nlohmann::json::array());
}

// A netdev the script probes twice (named by the inventory and behind an RDMA device) is kept once,
// with the first section's facts.
TEST(HostFacts, NetdevsAreDeduplicated) {
  const HostFacts f = parse_probe_output(
      "@@ netdev eth0\nmtu 9000\n@@ ethtool eth0\ndriver: mlx5_core\n"
      "@@ netdev eth0\nmtu 1500\n@@ ethtool eth0\ndriver: other\n");
  ASSERT_EQ(f.netdevs.size(), 1u);
  EXPECT_EQ(f.netdevs[0].mtu, 9000);
  EXPECT_EQ(f.netdevs[0].driver, "mlx5_core");
}

// dpkg-query's lines as the probe prints them (its -f format): "ii" is installed, "rc" is removed
// with its configuration kept, which is not installed.
TEST(HostFacts, PackagesInstalledAndApt) {
  const HostFacts f = parse_probe_output(
      "@@ packages\napt-get yes\nrocehil 0.1.0 ii \nrocehil-dpdk 0.0.9 rc \n@@ host\n");
  EXPECT_TRUE(f.apt);
  EXPECT_EQ(f.packages, (std::map<std::string, std::string>{{"rocehil", "0.1.0"}}));
  const HostFacts none = parse_probe_output("@@ packages\n");
  EXPECT_FALSE(none.apt);
  EXPECT_TRUE(none.packages.empty());
}

// The probe's view of rocehil's packages on this machine equals dpkg-query's own, run apart.
TEST(ProbeScript, ListsRocehilsPackagesAsDpkgDoes) {
  std::vector<std::string> argv = probe_command("rocehil", {});
  argv[0] = "/bin/sh";
  const remote::CommandResult r = remote::run_command(argv, {});
  ASSERT_TRUE(r.succeeded()) << r.reason();
  const HostFacts f = parse_probe_output(r.out);
  EXPECT_EQ(f.apt, std::filesystem::exists("/usr/bin/apt-get"));
  const remote::CommandResult dpkg =
      remote::run_command({"dpkg-query", "-W", "-f=${Package} ${Version} ${db:Status-Abbrev}\n",
                           "rocehil", "rocehil-dpdk"},
                          {});
  std::map<std::string, std::string> expected;
  std::istringstream lines(dpkg.out);
  std::string name, version, status;
  while (lines >> name >> version >> status)
    if (status == "ii") expected[name] = version;
  EXPECT_EQ(f.packages, expected) << r.out;
}

// The script itself, run for real by /bin/sh on this machine: loopback is there, the other names
// are not, and no argument is ever executed.
TEST(ProbeScript, RunsHereAndTreatsArgumentsAsData) {
  const std::string mark = "/tmp/rocehil-probe-pwned-" + std::to_string(getpid());
  std::vector<std::string> argv = probe_command(
      "/nonexistent/rocehil",
      {"lo", "nonexistent0", "lo;touch " + mark, "$(touch " + mark + "2)", "../../etc", "-x"});
  argv[0] = "/bin/sh";
  const remote::CommandResult r = remote::run_command(argv, {});
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
  HostFacts f = parse_probe_output(remote::run_command(argv, {}).out);
  EXPECT_FALSE(f.agent_version.empty());  // echo --version prints something and exits 0
  argv = probe_command("false", {});
  argv[0] = "/bin/sh";
  f = parse_probe_output(remote::run_command(argv, {}).out);
  EXPECT_EQ(f.agent_problem.rfind("exit 1", 0), 0u) << f.agent_problem;
  const std::string plain = "/tmp/rocehil-probe-plain-" + std::to_string(getpid());
  std::ofstream(plain) << "not a program\n";
  std::filesystem::permissions(
      plain, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  argv = probe_command(plain, {});
  argv[0] = "/bin/sh";
  f = parse_probe_output(remote::run_command(argv, {}).out);
  EXPECT_EQ(f.agent_problem, "not executable");
  std::filesystem::remove(plain);
}

std::vector<std::string> with_sh(std::vector<std::string> argv) {
  argv[0] = "/bin/sh";
  return argv;
}

// An executable test script in a fresh file.
std::string write_script(const std::filesystem::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

TEST(ProbeScript, AgentStdoutAndStderrAreKeptApart) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rocehil-probe-agent-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  // A warning on stderr does not hide the version on stdout.
  const std::string noisy =
      write_script(dir / "noisy", "echo 'warning: odd locale' >&2\necho 'rocehil 0.1.0'\necho x\n");
  HostFacts f = parse_probe_output(remote::run_command(with_sh(probe_command(noisy, {})), {}).out);
  EXPECT_EQ(f.agent_version, "rocehil 0.1.0");
  EXPECT_TRUE(f.agent_problem.empty());
  // A failure reports stderr's first line, not what went to stdout.
  const std::string broken =
      write_script(dir / "broken", "echo 'usage'\necho 'cannot open shared object' >&2\nexit 3\n");
  f = parse_probe_output(remote::run_command(with_sh(probe_command(broken, {})), {}).out);
  EXPECT_EQ(f.agent_problem, "exit 3: cannot open shared object");
  EXPECT_TRUE(f.agent_version.empty());
  // A directory is no program; a hostile name is only a name.
  f = parse_probe_output(remote::run_command(with_sh(probe_command(dir.string(), {})), {}).out);
  EXPECT_EQ(f.agent_problem, "not executable");
  const std::string mark = (dir / "pwned").string();
  f = parse_probe_output(
      remote::run_command(with_sh(probe_command("$(touch " + mark + ")", {})), {}).out);
  EXPECT_EQ(f.agent_problem, "not found");
  f = parse_probe_output(
      remote::run_command(with_sh(probe_command("rocehil;touch " + mark, {})), {}).out);
  EXPECT_EQ(f.agent_problem, "not found");
  EXPECT_FALSE(std::filesystem::exists(mark));
  // With no arguments at all the script still runs to the end.
  const remote::CommandResult r =
      remote::run_command({"/bin/sh", "-c", std::string(probe_script()), "rocehil-probe"}, {});
  ASSERT_TRUE(r.succeeded()) << r.reason();
  EXPECT_EQ(parse_probe_output(r.out).agent_problem, "not found");
  std::filesystem::remove_all(dir);
}

// Fake tools on PATH: the script's sections reach the parser intact, and a tool that floods (a
// million lines, a 20 MB line) is cut short.
TEST(ProbeScript, ToolOutputIsParsedAndBounded) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("rocehil-probe-tools-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  write_script(dir / "ethtool",
               "printf 'driver: fakedrv\\nversion: 1.2\\nfirmware-version: 9.9.9 (X)\\n"
               "bus-info: 0000:00:00.0\\n'\n"
               "head -c 20000000 /dev/zero | tr '\\000' x\necho\nseq 1 1000000\n");
  write_script(dir / "mlnx_qos",
               "printf 'DCBX mode: OS controlled\\nPriority trust state: pcp\\n"
               "PFC configuration:\\n\\tpriority    0   1   2   3   4   5   6   7\\n"
               "\\tenabled     0   0   0   1   1   0   0   0   \\n'\nseq 1 1000000\n");
  write_script(
      dir / "nvidia-smi",
      "printf '\\t\\033[4mGPU0\\tNIC0\\tCPU Affinity\\tNUMA Affinity\\tGPU NUMA ID\\033[0m\\n"
      "\\033[4mGPU0\\t\\033[0m X \\tPHB\\t0-15\\t0\\t\\tN/A\\n"
      "\\033[4mNIC0\\t\\033[0mPHB\\t X \\n\\nNIC Legend:\\n\\n  NIC0: mlx5_4\\n'\n");
  const std::string path = "PATH=" + dir.string() + ":/usr/bin:/bin";
  std::vector<std::string> argv = probe_command("/bin/echo", {"lo"});
  argv[0] = "/bin/sh";
  argv.insert(argv.begin(), {"/usr/bin/env", path});
  const remote::CommandResult r = remote::run_command(argv, {});
  ASSERT_TRUE(r.succeeded()) << r.reason();
  EXPECT_LT(r.out.size(), 200000u);
  const HostFacts f = parse_probe_output(r.out);
  ASSERT_EQ(f.netdevs.size(), 1u);
  const NetdevFacts& lo = f.netdevs[0];
  EXPECT_EQ(lo.driver, "fakedrv");
  EXPECT_EQ(lo.firmware, "9.9.9 (X)");
  ASSERT_TRUE(lo.pfc);
  EXPECT_EQ(lo.pfc_source, "mlnx_qos");
  EXPECT_EQ(lo.trust, "pcp");
  for (std::size_t p = 0; p < 8; ++p) EXPECT_EQ((*lo.pfc)[p], p == 3 || p == 4) << p;
  EXPECT_TRUE(f.nvidia_smi);
  ASSERT_EQ(f.gpu_nic.size(), 1u);
  EXPECT_EQ(f.gpu_nic[0].gpu, 0);
  EXPECT_EQ(f.gpu_nic[0].nic, "mlx5_4");
  EXPECT_EQ(f.gpu_nic[0].relation, "PHB");
  std::filesystem::remove_all(dir);
}

}  // namespace
TEST(HostFacts, SettingsJournalsLeftOnTheHostAreListed) {
  const HostFacts f = parse_probe_output(
      "@@ host\nhostname gpu001\n@@ settings_journals\ngpu001.json\n"
      "fab/gpu001.soft-198.18.1.11.json\n");
  EXPECT_EQ(f.settings_journals,
            (std::vector<std::string>{"gpu001.json", "fab/gpu001.soft-198.18.1.11.json"}));
  EXPECT_TRUE(f.notes.empty());
  EXPECT_TRUE(parse_probe_output("@@ host\nhostname gpu001\n").settings_journals.empty());
}

}  // namespace rocehil::preflight
