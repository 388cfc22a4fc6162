// Applying and putting back a host's NIC settings: checked before any change, journaled before
// each, read back after; put back from the journal by the run or by whoever finds it.

#include "rocehil/settings/journaled_changes.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::settings {
namespace {

using testing::FakeHost;

struct Changes {
  FakeHost host;
  std::string journal = host.file("run/rocehil/settings/h1.json");
  JournaledChanges changes{host.root(), journal, "h1"};
  std::vector<Assignment> wanted = {assign("roce_rp.rpg_time_reset", "600", "--set"),
                                    assign("roce_np.enable", "3,4", "--set"),
                                    assign("mtu", "9000", "--set")};
};

TEST(JournaledChanges, AppliesJournalFirstAndPutsBackFromTheJournal) {
  Changes c;
  const auto made = c.changes.apply(c.wanted, {"eth1"}, "run-1", "2026-11-26T18:15:00Z");
  // mtu was 9000 already: left alone, not journaled.
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0].before, "300");
  EXPECT_EQ(made[1].before, "3");
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "600");
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_np/enable/4"), "1");
  const std::optional<Journal> j = load(c.journal);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->entries, made);
  EXPECT_EQ(j->run, "run-1");

  const auto back = c.changes.restore();
  EXPECT_EQ(back.size(), 2u);
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_np/enable/4"), "0");
  EXPECT_FALSE(std::filesystem::exists(c.journal));
  EXPECT_TRUE(c.changes.restore().empty());  // nothing left to do
}

TEST(JournaledChanges, AHostWithoutTheSettingStopsBeforeAnyChange) {
  Changes c;
  try {
    c.changes.apply(c.wanted, {"eth1", "eth3"}, "run-1", "t");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_STREQ(e.what(),
                 "--set: host 'h1': cannot set roce_rp.rpg_time_reset: eth3 has neither "
                 "ecn/roce_rp/rpg_time_reset in sysfs (MLNX_OFED's mlx5 driver) nor "
                 "cc_params/rp_time_reset in debugfs (upstream mlx5_ib, debugfs mounted, read as "
                 "root)");
  }
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_FALSE(std::filesystem::exists(c.journal));
}

// A write the kernel refuses half way: what was changed before it is put back.
TEST(JournaledChanges, ARefusedWritePutsBackWhatWasChanged) {
  if (!std::filesystem::exists("/proc/sys/net/ipv4/tcp_ecn")) GTEST_SKIP() << "no tcp_ecn sysctl";
  Changes c;
  const std::string gd = c.host.file("sys/class/net/eth1/ecn/roce_rp/rpg_gd");
  std::filesystem::remove(gd);
  std::filesystem::create_symlink("/proc/sys/net/ipv4/tcp_ecn", gd);
  c.wanted.push_back(assign("roce_rp.rpg_gd", "11", "--set"));
  try {
    c.changes.apply(c.wanted, {"eth1"}, "run-1", "t");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find("the driver refused 11"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(what had been changed is back as it was)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_np/enable/4"), "0");
  EXPECT_FALSE(std::filesystem::exists(c.journal));
}

// A NIC whose firmware takes a write but keeps its own value (it clamps the rate-increase timer
// at 100 us here): a fault no file on this machine makes, so a Target stands in for the NIC.
class ClampingNic final : public Target {
 public:
  explicit ClampingNic(std::string* value) : value_(value) {}
  bool has(const Setting&, std::string*) const override { return true; }
  std::optional<std::string> read(const Setting&) const override { return *value_; }
  void write(const Setting&, const std::string& canonical) const override {
    *value_ = std::to_string(std::min(std::stoll(canonical), 100LL));
  }
  std::string where(const Setting&) const override { return "clamping firmware"; }
  const std::string& netdev() const noexcept override { return netdev_; }

 private:
  std::string* value_;
  std::string netdev_ = "eth1";
};

TEST(JournaledChanges, AReadBackThatDiffersNamesHostSettingWantedAndFoundAndPutsBack) {
  FakeHost host;
  std::string value = "55";
  JournaledChanges changes(
      [&value](const std::string&) { return std::make_unique<ClampingNic>(&value); },
      host.file("journal/h1.json"), "h1");
  try {
    changes.apply({assign("roce_rp.rpg_time_reset", "300", "--set")}, {"eth1"}, "r", "t");
    ADD_FAILURE() << "applied";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "host 'h1': eth1 roce_rp.rpg_time_reset: wanted 300, found 100 (clamping firmware) "
              "(what had been changed is back as it was)");
  }
  EXPECT_EQ(value, "55");
  EXPECT_FALSE(std::filesystem::exists(host.file("journal/h1.json")));
}

// A controller killed after changing the settings leaves its journal: the next one refuses to
// change anything on top of it, and restore() puts the values back.
TEST(JournaledChanges, AJournalLeftBehindIsRestoredNotBuiltOn) {
  Changes c;
  c.changes.apply(c.wanted, {"eth1"}, "killed-run", "t");
  JournaledChanges next(c.host.root(), c.journal, "h1");
  try {
    next.apply(c.wanted, {"eth1"}, "next-run", "t");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds the settings changed by run killed-run"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(next.restore().size(), 2u);
  EXPECT_EQ(c.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(next.apply(c.wanted, {"eth1"}, "next-run", "t").size(), 2u);
}

}  // namespace
}  // namespace rocehil::settings
