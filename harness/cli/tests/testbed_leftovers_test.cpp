// What `testbed down` discards of a killed run's settings: only what names its own testbed.

#include "testbed/testbed_leftovers.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "rocehil/settings/journal.hpp"

namespace rocehil::cli {
namespace {

namespace fs = std::filesystem;

class Leftovers : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-leftovers.XXXXXX";
    root_ = ::mkdtemp(pattern);
    journals_ = root_ + "/settings";
    soft_ = root_ + "/soft";
  }
  void TearDown() override { fs::remove_all(root_); }

  void journal(const std::string& name, const std::vector<std::string>& netdevs) {
    settings::Journal j{"h1", "20261127T223706Z-settings", "", {}, "", std::nullopt};
    for (const auto& netdev : netdevs)
      j.entries.push_back({"roce_np.min_time_between_cnps", netdev, "f", "4", "50"});
    settings::save(j, journals_ + "/" + name);
  }
  void soft_file(const std::string& address, const std::string& netdev) {
    const std::string dir = soft_ + "/" + address + "/sys/class/net/" + netdev + "/ecn/roce_np";
    fs::create_directories(dir);
    std::ofstream(dir + "/min_time_between_cnps") << "4\n";
  }
  bool journal_left(const std::string& name) const { return fs::exists(journals_ + "/" + name); }

  std::string root_, journals_, soft_;
};

TEST_F(Leftovers, TheTestbedsOwnJournalsAndSoftNicsGoAndNothingElse) {
  journal("testbed-t39bc.json", {""});                  // its switches
  journal("testbed-t39.json", {""});                    // another testbed's switches
  journal("h1.soft-198.18.1.11.json", {"t39bc-nic0"});  // its soft NIC
  journal("h2.soft-198.18.1.12.json", {"t39-nic0"});    // another testbed's
  journal("h3.json", {"t39bc-nic0", "eth1"});           // a real NIC among them: kept
  journal("h4.json", {});                               // nothing to tell by: kept
  std::ofstream(journals_ + "/h5.json") << "{";         // broken: left for restore to name
  soft_file("198.18.1.11", "t39bc-nic0");
  soft_file("198.18.1.11", "t39-nic0");
  // Journals kept per fabric: its own directory goes whole, another testbed's stays.
  journal("testbed-t39bc/h1.soft-198.18.1.11.json", {"t39bc-nic0"});
  journal("testbed-t39bc/testbed-t39bc.json", {""});
  journal("testbed-t39/h1.soft-198.18.1.11.json", {"t39-nic0"});

  const DiscardedSettings d = discard_testbed_settings("t39bc", journals_, soft_);

  EXPECT_EQ(d.journals, 4);
  EXPECT_FALSE(fs::exists(journals_ + "/testbed-t39bc"));
  EXPECT_TRUE(journal_left("testbed-t39/h1.soft-198.18.1.11.json"));
  EXPECT_EQ(d.soft_netdevs, 1);
  EXPECT_FALSE(journal_left("testbed-t39bc.json"));
  EXPECT_FALSE(journal_left("h1.soft-198.18.1.11.json"));
  for (const char* kept :
       {"testbed-t39.json", "h2.soft-198.18.1.12.json", "h3.json", "h4.json", "h5.json"})
    EXPECT_TRUE(journal_left(kept)) << kept;
  EXPECT_FALSE(fs::exists(soft_ + "/198.18.1.11/sys/class/net/t39bc-nic0"));
  EXPECT_TRUE(fs::exists(soft_ + "/198.18.1.11/sys/class/net/t39-nic0"));
}

TEST_F(Leftovers, NoDirectoriesAndNoIdDiscardNothing) {
  EXPECT_EQ(discard_testbed_settings("t1", journals_, soft_).journals, 0);
  journal("testbed-.json", {""});
  soft_file("198.18.1.11", "-nic0");
  const DiscardedSettings d = discard_testbed_settings("", journals_, soft_);
  EXPECT_EQ(d.journals + d.soft_netdevs, 0);
  EXPECT_TRUE(journal_left("testbed-.json"));
}

}  // namespace
}  // namespace rocehil::cli
