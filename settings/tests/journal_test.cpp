// Journals: written whole, read back as written, and never silently ignored when broken.

#include "rocehil/settings/journal.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::settings {
namespace {

using testing::FakeHost;

Journal sample() {
  return {"h1",
          "20261126T181500Z-smoke",
          "2026-11-26T18:15:00Z",
          {{"roce_rp.rpg_time_reset", "eth1", "/sys/class/net/eth1/ecn/roce_rp/rpg_time_reset",
            "300", "600"},
           {"mtu", "eth1", "/sys/class/net/eth1/mtu", "1500", "9000"}},
          "testbed-tb1",
          JournalOwner{"ctl", "4c4c", "0b5e", 4242, 987654}};
}

TEST(Journal, SavedAndLoadedAsWritten) {
  const FakeHost dir;
  const std::string path = journal_path(dir.file("run/rocehil/settings"), "testbed-tb1", "h1");
  EXPECT_EQ(path, dir.root() + "/run/rocehil/settings/testbed-tb1/h1.json");
  EXPECT_EQ(load(path), std::nullopt);
  save(sample(), path);
  EXPECT_EQ(load(path), sample());
  EXPECT_EQ(journal_from_json(to_json(sample()), "x"), sample());
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

TEST(Journal, ABrokenJournalIsAnErrorNamingTheFile) {
  const FakeHost dir;
  const std::string path = dir.file("h1.json");
  FakeHost::put(path, "{\"schema_version\": 1, \"host\": \"h1\"");
  try {
    load(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_EQ(std::string(e.what()).rfind(path + ": not JSON", 0), 0u) << e.what();
  }
  nlohmann::json j = to_json(sample());
  j["entries"][1].erase("before");
  FakeHost::put(path, j.dump());
  try {
    load(path);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'before' is missing"), std::string::npos) << e.what();
  }
  j = to_json(sample());
  j["schema_version"] = 2;
  EXPECT_THROW(journal_from_json(j, "x"), Error);
}

// A journal an older rocehil wrote has no fabric and no owner: read as such, not refused.
TEST(Journal, AJournalWithoutFabricOrOwnerIsAnOlderOnesAndReadsAsOwnerUnknown) {
  nlohmann::json j = to_json(sample());
  j.erase("fabric");
  j.erase("owner");
  const Journal old = journal_from_json(j, "x");
  EXPECT_EQ(old.fabric, "");
  EXPECT_EQ(old.owner, std::nullopt);
  EXPECT_EQ(old.entries, sample().entries);
  j = to_json(sample());
  j["owner"].erase("start_ticks");
  EXPECT_THROW(journal_from_json(j, "x"), Error);
}

TEST(Journal, AJournalsPathSaysWhoseItIsAndWhichFabrics) {
  EXPECT_TRUE(is_journal_of("testbed-tb1/h1.json", "h1", "testbed-tb1"));
  EXPECT_TRUE(is_journal_of("testbed-tb1/h1.soft-198.18.1.11.json", "h1", "testbed-tb1"));
  // Two testbeds on one machine: the same host names and addresses, never each other's.
  EXPECT_FALSE(is_journal_of("testbed-tb2/h1.soft-198.18.1.11.json", "h1", "testbed-tb1"));
  EXPECT_FALSE(is_journal_of("testbed-tb1/h10.json", "h1", "testbed-tb1"));
  EXPECT_FALSE(is_journal_of("testbed-tb1/h1.json.tmp", "h1", "testbed-tb1"));
  EXPECT_FALSE(is_journal_of("testbed-tb1/testbed-tb1.json", "h1", "testbed-tb1"));
  // The layout before fabrics: any fabric's restore puts it back.
  EXPECT_TRUE(is_journal_of("h1.json", "h1", "testbed-tb1"));
  EXPECT_TRUE(is_journal_of("h1.soft-198.18.1.11.json", "h1", "testbed-tb1"));
  EXPECT_EQ(journal_path("/run/rocehil/settings", "fab", "h1"),
            "/run/rocehil/settings/fab/h1.json");
  EXPECT_EQ(journal_path("/run/rocehil/settings", "", "h1"), "/run/rocehil/settings/h1.json");
}

}  // namespace

}  // namespace rocehil::settings
