// A NIC's settings files under a root laid out like a ConnectX host's: found in sysfs or
// debugfs, read and written as canonical values, and their absence explained.

#include "rocehil/settings/nic_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::settings {
namespace {

using testing::FakeHost;

const Setting& setting(std::string_view name) {
  const Setting* s = find(name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

TEST(NicFiles, SysfsSettingsAreReadAndWritten) {
  const FakeHost host;
  const NicFiles eth1(host.root(), "eth1");
  EXPECT_EQ(eth1.read(setting("roce_rp.rpg_time_reset")), "300");
  EXPECT_EQ(eth1.read(setting("roce_rp.enable")), "3");
  EXPECT_EQ(eth1.read(setting("mtu")), "9000");
  eth1.write(setting("roce_rp.rpg_time_reset"), "600");
  EXPECT_EQ(host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "600");
  eth1.write(setting("roce_np.enable"), "3,5");
  EXPECT_EQ(eth1.read(setting("roce_np.enable")), "3,5");
  EXPECT_EQ(host.value("sys/class/net/eth1/ecn/roce_np/enable/5"), "1");
  EXPECT_EQ(host.value("sys/class/net/eth1/ecn/roce_np/enable/0"), "0");
  eth1.write(setting("roce_np.enable"), "none");
  EXPECT_EQ(eth1.read(setting("roce_np.enable")), "none");
  EXPECT_EQ(eth1.where(setting("roce_rp.rpg_gd")),
            host.root() + "/sys/class/net/eth1/ecn/roce_rp/rpg_gd");
}

TEST(NicFiles, TheUpstreamDriversDebugfsIsFoundThroughTheDevicesPciAddress) {
  const FakeHost host;
  const NicFiles eth2(host.root(), "eth2");
  EXPECT_EQ(eth2.read(setting("roce_rp.rpg_time_reset")), "300");
  eth2.write(setting("roce_np.cnp_dscp"), "46");
  EXPECT_EQ(host.value("sys/kernel/debug/mlx5/0000:3b:00.1/cc_params/np_cnp_dscp"), "46");
  // Per-priority enables are MLNX_OFED's sysfs only.
  std::string why;
  EXPECT_FALSE(eth2.has(setting("roce_np.enable"), &why));
  EXPECT_EQ(why, "eth2 has no ecn/roce_np/enable in sysfs (MLNX_OFED's mlx5 driver has it)");
  EXPECT_EQ(eth2.read(setting("roce_np.enable")), std::nullopt);
}

TEST(NicFiles, ANicWithoutTheSettingSaysWhereItLooked) {
  const FakeHost host;
  const NicFiles eth3(host.root(), "eth3");
  std::string why;
  EXPECT_FALSE(eth3.has(setting("roce_rp.rpg_gd"), &why));
  EXPECT_EQ(why,
            "eth3 has neither ecn/roce_rp/rpg_gd in sysfs (MLNX_OFED's mlx5 driver) nor "
            "cc_params/rp_gd in debugfs (upstream mlx5_ib, debugfs mounted, read as root)");
  EXPECT_FALSE(eth3.has(setting("pfc"), &why));
  EXPECT_EQ(why,
            "pfc is set with mlnx_qos -i DEV --pfc, or dcb pfc set dev DEV prio-pfc, not "
            "through a file");
  EXPECT_FALSE(eth3.has(setting("switch.ecn_mark_mbps"), &why));
  try {
    eth3.write(setting("roce_rp.rpg_gd"), "10");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
  }
}

TEST(NicFiles, AFileHoldingWhatTheSettingDoesNotTakeIsAnErrorNotAValue) {
  FakeHost host;
  FakeHost::put(host.file("sys/class/net/eth1/ecn/roce_rp/rpg_gd"), "eleven");
  FakeHost::put(host.file("sys/class/net/eth1/ecn/roce_rp/enable/2"), "on");
  const NicFiles eth1(host.root(), "eth1");
  try {
    eth1.read(setting("roce_rp.rpg_gd"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find("rpg_gd holds 'eleven', which roce_rp.rpg_gd does not "
                                         "take (0..15 (log2))"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(eth1.read(setting("roce_rp.enable")), Error);
}

// The kernel refusing a write, for real: the setting's file is a sysctl that takes 0..2 only
// (the write fails with EINVAL and changes nothing).
TEST(NicFiles, AWriteTheKernelRefusesIsAnErrorWithItsErrno) {
  if (!std::filesystem::exists("/proc/sys/net/ipv4/tcp_ecn")) GTEST_SKIP() << "no tcp_ecn sysctl";
  FakeHost host;
  const std::string file = host.file("sys/class/net/eth1/ecn/roce_rp/rpg_gd");
  std::filesystem::remove(file);
  std::filesystem::create_symlink("/proc/sys/net/ipv4/tcp_ecn", file);
  const NicFiles eth1(host.root(), "eth1");
  try {
    eth1.write(setting("roce_rp.rpg_gd"), "11");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_EQ(e.code(), EINVAL);
    EXPECT_NE(std::string(e.what()).find("the driver refused 11 for "), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rocehil::settings
