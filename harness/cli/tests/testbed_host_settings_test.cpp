// The settings `testbed up --lossless` gives its soft hosts: in the files the agent reads, read
// back through the soft provider's own target as `settings show` reads them, and gone with
// `down`.

#include "testbed/testbed_host_settings.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "rocehil/agent/soft_nic.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "testbed/testbed_leftovers.hpp"

namespace rocehil::cli {
namespace {

namespace fs = std::filesystem;

class HostSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-host-settings.XXXXXX";
    root_ = ::mkdtemp(pattern);
    testbed::TestbedOptions options;
    options.id = "hd";
    options.dir = root_ + "/tb";
    options.lossless = true;
    topology_ = testbed::build_topology(options, 40);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string soft() const { return root_ + "/soft"; }
  agent::SoftNic nic(const std::string& address) const {
    return agent::SoftNic(soft() + "/" + address, "hd-nic0");
  }
  std::string root_;
  testbed::Topology topology_;
};

TEST_F(HostSettings, EveryHostNicReadsThemBack) {
  const auto written = write_lossless_host_settings(topology_, {3, 4}, soft());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"roce_rp.rpg_time_reset", "3000"},
      {"roce_rp.rpg_byte_reset", "0"},
      {"pfc", "3,4"},
      {"trust", "dscp"}};
  EXPECT_EQ(written, expected);
  std::set<std::string> addresses;
  for (const auto& ns : topology_.namespaces) {
    if (ns.role != testbed::Role::host) continue;
    addresses.insert(ns.fabric_address);
    const agent::SoftNic host = nic(ns.fabric_address);
    for (const auto& [name, value] : expected)
      EXPECT_EQ(host.read(*settings::find(name)), value) << ns.name << " " << name;
    const agent::SoftQos qos = host.qos();
    EXPECT_FALSE(qos.trust_pcp);
    EXPECT_EQ(qos.pfc_priorities, (1u << 3) | (1u << 4));
  }
  EXPECT_EQ(addresses.size(), 4u);
}

TEST_F(HostSettings, NoLosslessPriorityGivesHostsNoPfc) {
  write_lossless_host_settings(topology_, {}, soft());
  EXPECT_EQ(nic("198.18.1.11").read(*settings::find("pfc")), "none");
  EXPECT_EQ(nic("198.18.1.11").qos().pfc_priorities, 0);
}

TEST_F(HostSettings, ASecondUpOverwritesWhatARunLeftAndDownRemovesIt) {
  write_lossless_host_settings(topology_, {3, 4}, soft());
  const auto* timer = settings::find("roce_rp.rpg_time_reset");
  const auto* pfc = settings::find("pfc");
  const agent::SoftNic h1 = nic("198.18.1.11");
  h1.write(*timer, "300");
  h1.write(*pfc, "4");
  write_lossless_host_settings(topology_, {3, 4}, soft());
  EXPECT_EQ(h1.read(*timer), "3000");
  EXPECT_EQ(h1.read(*pfc), "3,4");
  EXPECT_EQ(discard_testbed_settings("hd", root_ + "/journals", soft()).soft_netdevs, 4);
  EXPECT_EQ(h1.read(*timer), std::nullopt);
  EXPECT_EQ(h1.read(*pfc), std::string(agent::soft_pfc_default)) << "back to the soft default";
}

TEST_F(HostSettings, TheStretchedTimerIsLongerThanTheDefaultKmaxTakesToDrain) {
  // 200 KB at 1 Gbit/s is 1.6 ms: the timer must outlast the loop, as ConnectX's 300 us
  // outlasts a 100 Gbit/s port's 2 MB Kmax (160 us).
  EXPECT_EQ(lossless_host_dcqcn[0].name, "roce_rp.rpg_time_reset");
  EXPECT_GT(std::stoi(std::string(lossless_host_dcqcn[0].value)), 1600);
}

}  // namespace
}  // namespace rocehil::cli
