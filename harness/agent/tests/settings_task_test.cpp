// The agent's settings requests over a directory laid out like a ConnectX host, and over the soft
// provider's own files: what is changed, journaled, read back, restored and refused.
#include "settings_task.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "rocehil/traffic/soft_settings.hpp"

namespace rocehil::agent {
namespace {

using settings::testing::FakeHost;

struct Places {
  FakeHost host;
  SettingsPlaces places;
  Places() {
    places.nic_root = host.root();
    places.soft_dir = host.root() + "/soft";
    places.journal_dir = host.root() + "/journal";
    places.netdev_of = [](std::string_view address) -> std::string {
      if (address == "198.18.1.11") return "eth1";
      if (address == "198.18.1.12") return "eth3";
      return "";
    };
  }
};

SettingsRequest request(SettingsAction action, std::string provider, std::string address,
                        std::vector<SettingValue> values = {}) {
  SettingsRequest r;
  r.action = action;
  r.host = "h1";
  r.provider = std::move(provider);
  r.addresses = {std::move(address)};
  r.run = "run-1";
  r.values = std::move(values);
  return r;
}

TEST(SettingsTask, AppliesReadsBackAndRestoresANicsFiles) {
  Places p;
  const auto reply = handle_settings(
      request(SettingsAction::apply, "verbs", "198.18.1.11",
              {{"roce_rp.rpg_time_reset", "55", ""}, {"roce_np.enable", "3,4", ""}}),
      p.places);
  ASSERT_EQ(reply.changes.size(), 2u);
  EXPECT_EQ(reply.changes[0], (SettingChange{"roce_rp.rpg_time_reset", "eth1",
                                             p.host.file("sys/class/net/eth1/ecn/roce_rp/"
                                                         "rpg_time_reset"),
                                             "300", "55"}));
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "55");
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_np/enable/4"), "1");
  EXPECT_EQ(reply.values, (std::vector<SettingValue>{{"roce_rp.rpg_time_reset", "55", "eth1"},
                                                     {"roce_np.enable", "3,4", "eth1"}}));
  EXPECT_TRUE(std::filesystem::exists(p.places.journal_dir + "/h1.json"));

  const auto read = handle_settings(
      request(SettingsAction::read, "verbs", "198.18.1.11", {{"roce_rp.rpg_time_reset", "", ""}}),
      p.places);
  EXPECT_EQ(read.values.at(0).value, "55");

  const auto restored =
      handle_settings(request(SettingsAction::restore, "verbs", "198.18.1.11"), p.places);
  EXPECT_TRUE(restored.journal_found);
  EXPECT_EQ(restored.journal_run, "run-1");
  EXPECT_EQ(restored.changes.size(), 2u);
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_np/enable/4"), "0");
  EXPECT_FALSE(std::filesystem::exists(p.places.journal_dir + "/h1.json"));

  const auto again =
      handle_settings(request(SettingsAction::restore, "verbs", "198.18.1.11"), p.places);
  EXPECT_FALSE(again.journal_found);
  EXPECT_TRUE(again.changes.empty());
}

TEST(SettingsTask, ANicWithoutTheSettingStopsBeforeAnyChange) {
  Places p;
  SettingsRequest r = request(SettingsAction::apply, "verbs", "198.18.1.11",
                              {{"roce_rp.rpg_time_reset", "55", ""}});
  r.addresses.push_back("198.18.1.12");  // eth3: no ecn/ at all
  try {
    handle_settings(r, p.places);
    ADD_FAILURE() << "applied";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("host 'h1'"), std::string::npos) << m;
    EXPECT_NE(m.find("roce_rp.rpg_time_reset"), std::string::npos) << m;
    EXPECT_NE(m.find("eth3"), std::string::npos) << m;
  }
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
  EXPECT_FALSE(std::filesystem::exists(p.places.journal_dir + "/h1.json"));
}

TEST(SettingsTask, AnAddressNoInterfaceHoldsIsNamed) {
  Places p;
  try {
    handle_settings(request(SettingsAction::read, "verbs", "198.18.9.9"), p.places);
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no interface holds 198.18.9.9"), std::string::npos)
        << e.what();
  }
}

TEST(SettingsTask, TheSoftProvidersFilesStartAtItsDefaultsAndFeedItsSetup) {
  Places p;
  EXPECT_TRUE(soft_settings_for("198.18.1.11", p.places).empty()) << "nothing set yet";
  const auto reply = handle_settings(
      request(SettingsAction::apply, "soft", "198.18.1.11",
              {{"roce_rp.rpg_min_dec_fac", "20", ""}, {"roce_rp.dce_tcp_rtt", "55", ""}}),
      p.places);
  // dce_tcp_rtt is already 55 on the soft provider (ConnectX ships 1): nothing to change.
  ASSERT_EQ(reply.changes.size(), 1u);
  EXPECT_EQ(reply.changes[0].before, "50");
  const auto given = soft_settings_for("198.18.1.11", p.places);
  EXPECT_EQ(given.size(), traffic::soft_setting_defaults().size());
  for (const traffic::SoftSetting& s : given) {
    if (s.name == "roce_rp.rpg_min_dec_fac") {
      EXPECT_EQ(s.value, 20);
    }
    if (s.name == "roce_np.min_time_between_cnps") {
      EXPECT_EQ(s.value, 2);  // the soft default
    }
  }
  traffic::check_soft_settings(given);
  // The NIC's own files are untouched: the soft provider's are elsewhere.
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");

  // A restore sent for the host's verbs NIC puts the soft provider's back too.
  const auto restored =
      handle_settings(request(SettingsAction::restore, "verbs", "198.18.1.11"), p.places);
  EXPECT_TRUE(restored.journal_found);
  ASSERT_EQ(restored.changes.size(), 1u);
  for (const traffic::SoftSetting& s : soft_settings_for("198.18.1.11", p.places)) {
    if (s.name == "roce_rp.rpg_min_dec_fac") {
      EXPECT_EQ(s.value, 50);
    }
  }
}

TEST(SettingsTask, PriorityEnablesAreNotTheSoftProviders) {
  Places p;
  try {
    handle_settings(
        request(SettingsAction::apply, "soft", "198.18.1.11", {{"roce_np.enable", "3", ""}}),
        p.places);
    ADD_FAILURE() << "applied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("roce_np.enable"), std::string::npos) << e.what();
  }
}

TEST(SettingsTask, TheCatalogueMarksExactlyWhatTheSoftProviderTakes) {
  std::set<std::string> soft_names;
  for (const traffic::SoftSetting& s : traffic::soft_setting_defaults()) soft_names.insert(s.name);
  std::set<std::string> marked;
  for (const settings::Setting& s : settings::catalogue())
    if (s.soft) marked.insert(std::string(s.name));
  EXPECT_EQ(marked, soft_names);
}

}  // namespace
}  // namespace rocehil::agent
