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
           {"mtu", "eth1", "/sys/class/net/eth1/mtu", "1500", "9000"}}};
}

TEST(Journal, SavedAndLoadedAsWritten) {
  const FakeHost dir;
  const std::string path = journal_path(dir.file("run/rocehil/settings"), "h1");
  EXPECT_EQ(path, dir.root() + "/run/rocehil/settings/h1.json");
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

}  // namespace
TEST(Journal, AJournalsFileNameSaysWhoseItIs) {
  EXPECT_TRUE(is_journal_of("h1.json", "h1"));
  EXPECT_TRUE(is_journal_of("h1.soft-198.18.1.11.json", "h1"));
  EXPECT_FALSE(is_journal_of("h10.json", "h1"));
  EXPECT_FALSE(is_journal_of("h1.json.tmp", "h1"));
  EXPECT_FALSE(is_journal_of("testbed-tb1.json", "h1"));
  EXPECT_EQ(journal_path("/run/rocehil/settings", "h1"), "/run/rocehil/settings/h1.json");
}

}  // namespace rocehil::settings
