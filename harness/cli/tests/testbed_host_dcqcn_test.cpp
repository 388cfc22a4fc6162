// The DCQCN timers `testbed up --lossless` gives its soft hosts: in the files the agent reads,
// read back through the settings library as `settings list` reads them, and gone with `down`.

#include "testbed_host_dcqcn.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "rocehil/settings/catalogue.hpp"
#include "rocehil/settings/nic_files.hpp"
#include "testbed_leftovers.hpp"

namespace rocehil::cli {
namespace {

namespace fs = std::filesystem;

class HostDcqcn : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-host-dcqcn.XXXXXX";
    root_ = ::mkdtemp(pattern);
    testbed::TestbedOptions options;
    options.id = "hd";
    options.dir = root_ + "/tb";
    options.lossless = true;
    topology_ = testbed::build_topology(options, 40);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string soft() const { return root_ + "/soft"; }
  std::string root_;
  testbed::Topology topology_;
};

TEST_F(HostDcqcn, EveryHostNicReadsTheStretchedTimersBack) {
  const auto written = write_lossless_host_dcqcn(topology_, soft());
  std::set<std::string> addresses;
  for (const auto& ns : topology_.namespaces) {
    if (ns.role != testbed::Role::host) continue;
    addresses.insert(ns.fabric_address);
    const settings::NicFiles files(soft() + "/" + ns.fabric_address, "hd-nic0");
    for (const HostSettingValue& v : lossless_host_dcqcn)
      EXPECT_EQ(files.read(*settings::find(v.name)), std::string(v.value)) << ns.name << v.name;
    // What the stretch leaves alone keeps the soft provider's default (no file: the agent's).
    EXPECT_EQ(files.read(*settings::find("roce_rp.rpg_ai_rate")), std::nullopt);
  }
  EXPECT_EQ(addresses.size(), 4u);
  EXPECT_EQ(written.size(), addresses.size() * std::size(lossless_host_dcqcn));
}

TEST_F(HostDcqcn, ASecondUpOverwritesWhatARunLeftAndDownRemovesIt) {
  write_lossless_host_dcqcn(topology_, soft());
  const auto* timer = settings::find("roce_rp.rpg_time_reset");
  const settings::NicFiles h1(soft() + "/198.18.1.11", "hd-nic0");
  h1.write(*timer, "300");
  write_lossless_host_dcqcn(topology_, soft());
  EXPECT_EQ(h1.read(*timer), "3000");
  EXPECT_EQ(discard_testbed_settings("hd", root_ + "/journals", soft()).soft_netdevs, 4);
  EXPECT_EQ(h1.read(*timer), std::nullopt);
}

TEST_F(HostDcqcn, TheStretchedTimerIsLongerThanTheDefaultKmaxTakesToDrain) {
  // 200 KB at 1 Gbit/s is 1.6 ms: the timer must outlast the loop, as ConnectX's 300 us
  // outlasts a 100 Gbit/s port's 2 MB Kmax (160 us).
  EXPECT_GT(std::stoi(std::string(lossless_host_dcqcn[0].value)), 1600);
  EXPECT_EQ(lossless_host_dcqcn[0].name, "roce_rp.rpg_time_reset");
}

}  // namespace
}  // namespace rocehil::cli
