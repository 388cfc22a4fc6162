// The agent's settings requests over a directory laid out like a ConnectX host, and over the soft
// provider's own files: what is changed, journaled, read back, restored and refused.
#include "settings_task.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "rocehil/settings/journal_owner.hpp"
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
  EXPECT_TRUE(std::filesystem::exists(p.places.journal_dir + "/h1.json"))
      << "a request naming no fabric keeps the layout older rocehils wrote";

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

TEST(SettingsTask, TheSoftProvidersPfcAndTrustAreSetJournaledAndRestored) {
  Places p;
  // Never set: a host set up for RoCE, PFC on every priority, trust dscp.
  SoftQos q = soft_qos_for("198.18.1.11", p.places);
  EXPECT_FALSE(q.trust_pcp);
  EXPECT_EQ(q.pfc_priorities, 0xff);
  const auto reply = handle_settings(request(SettingsAction::apply, "soft", "198.18.1.11",
                                             {{"pfc", "4", ""}, {"trust", "PCP", ""}}),
                                     p.places);
  ASSERT_EQ(reply.changes.size(), 2u);
  for (const SettingChange& c : reply.changes) {
    if (c.name == "pfc") {
      EXPECT_EQ(c.before, "0,1,2,3,4,5,6,7");
      EXPECT_EQ(c.wanted, "4");
    } else {
      EXPECT_EQ(c.before, "dscp");
      EXPECT_EQ(c.wanted, "pcp");
    }
    EXPECT_NE(c.where.find("/soft/198.18.1.11/sys/class/net/eth1/rocehil_qos/"), std::string::npos)
        << c.where;
  }
  q = soft_qos_for("198.18.1.11", p.places);
  EXPECT_TRUE(q.trust_pcp);
  EXPECT_EQ(q.pfc_priorities, 1u << 4);
  EXPECT_EQ(soft_qos_for("198.18.1.12", p.places).pfc_priorities, 0xff) << "another address";

  handle_settings(request(SettingsAction::restore, "soft", "198.18.1.11"), p.places);
  q = soft_qos_for("198.18.1.11", p.places);
  EXPECT_FALSE(q.trust_pcp);
  EXPECT_EQ(q.pfc_priorities, 0xff);
  // The next run turns PFC off altogether.
  handle_settings(request(SettingsAction::apply, "soft", "198.18.1.11", {{"pfc", "none", ""}}),
                  p.places);
  EXPECT_EQ(soft_qos_for("198.18.1.11", p.places).pfc_priorities, 0);
}

TEST(SettingsTask, PriorityEnablesReachTheSoftProviderAsABitmask) {
  Places p;
  handle_settings(request(SettingsAction::apply, "soft", "198.18.1.11",
                          {{"roce_np.enable", "3,4", ""}, {"roce_rp.enable", "none", ""}}),
                  p.places);
  std::map<std::string, std::int64_t> given;
  for (const traffic::SoftSetting& s : soft_settings_for("198.18.1.11", p.places))
    given[s.name] = s.value;
  EXPECT_EQ(given.at("roce_np.enable"), 0x18);
  EXPECT_EQ(given.at("roce_rp.enable"), 0);
  traffic::check_soft_settings(soft_settings_for("198.18.1.11", p.places));
  // Laid out as a ConnectX's: a 0/1 file per priority.
  const std::string ecn = "soft/198.18.1.11/sys/class/net/eth1/ecn/";
  EXPECT_EQ(p.host.value(ecn + "roce_np/enable/3"), "1");
  EXPECT_EQ(p.host.value(ecn + "roce_np/enable/5"), "0");
  EXPECT_EQ(p.host.value(ecn + "roce_rp/enable/3"), "0");
}

// A run's controller, as its journal names it: a child that waits to be killed.
class RunController {
 public:
  RunController() : here_(settings::this_machine()) {
    pid_ = ::fork();
    if (pid_ == 0) {
      for (;;) ::pause();
    }
    owner_ = {here_.name, here_.machine_id, here_.boot_id, pid_,
              settings::process_start_ticks(here_.proc, pid_).value_or(0)};
  }
  ~RunController() { killed(); }
  RunController(const RunController&) = delete;
  RunController& operator=(const RunController&) = delete;
  void killed() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  const settings::JournalOwner& owner() const { return owner_; }

 private:
  settings::Machine here_;
  settings::JournalOwner owner_;
  pid_t pid_ = 0;
};

// The issue: `rocehil run --set roce_np.min_time_between_cnps=7`, then `inventory check` on the
// same hosts, whose restore put the running run's setting back (7 -> 2) under it.
TEST(SettingsTask, AnotherCommandsRestoreLeavesALiveRunsJournalAndSettingsAlone) {
  Places p;
  RunController run;
  SettingsRequest apply = request(SettingsAction::apply, "soft", "198.18.1.11",
                                  {{"roce_np.min_time_between_cnps", "7", ""}});
  apply.fabric = "testbed-tb1";
  apply.owner = run.owner();
  ASSERT_EQ(handle_settings(apply, p.places).changes.size(), 1u);
  const std::string journal = p.places.journal_dir + "/testbed-tb1/h1.soft-198.18.1.11.json";
  ASSERT_TRUE(std::filesystem::exists(journal));
  const auto cnps = [&p] {
    for (const traffic::SoftSetting& s : soft_settings_for("198.18.1.11", p.places))
      if (s.name == "roce_np.min_time_between_cnps") return s.value;
    return std::int64_t{-1};
  };
  ASSERT_EQ(cnps(), 7);

  // inventory check, settings restore, the next run's preflight: a restore with no owner.
  SettingsRequest other = request(SettingsAction::restore, "verbs", "198.18.1.11");
  other.fabric = "testbed-tb1";
  const SettingsReply left = handle_settings(other, p.places);
  EXPECT_FALSE(left.journal_found);
  EXPECT_TRUE(left.changes.empty());
  ASSERT_EQ(left.in_use.size(), 1u);
  EXPECT_EQ(left.in_use[0].run, "run-1");
  EXPECT_EQ(left.in_use[0].owner, run.owner());
  EXPECT_TRUE(left.in_use[0].alive);
  EXPECT_EQ(cnps(), 7) << "the live run's setting was put back under it";
  EXPECT_TRUE(std::filesystem::exists(journal));

  // The run itself puts its own back.
  SettingsRequest own = other;
  own.owner = run.owner();
  const SettingsReply back = handle_settings(own, p.places);
  EXPECT_TRUE(back.journal_found);
  EXPECT_TRUE(back.in_use.empty());
  EXPECT_EQ(cnps(), 2);
  EXPECT_FALSE(std::filesystem::exists(journal));
}

TEST(SettingsTask, AKilledRunsJournalIsPutBackByWhoeverFindsIt) {
  Places p;
  RunController run;
  SettingsRequest apply = request(SettingsAction::apply, "verbs", "198.18.1.11",
                                  {{"roce_rp.rpg_time_reset", "55", ""}});
  apply.fabric = "fab";
  apply.owner = run.owner();
  handle_settings(apply, p.places);
  SettingsRequest other = request(SettingsAction::restore, "verbs", "198.18.1.11");
  other.fabric = "fab";
  EXPECT_EQ(handle_settings(other, p.places).in_use.size(), 1u);
  run.killed();
  const SettingsReply back = handle_settings(other, p.places);
  EXPECT_TRUE(back.journal_found);
  EXPECT_TRUE(back.in_use.empty());
  EXPECT_EQ(p.host.value("sys/class/net/eth1/ecn/roce_rp/rpg_time_reset"), "300");
}

// Two testbeds on one machine: the same host names and addresses. One's restore never sees the
// other's journal, even a dead run's; a journal of the layout before fabrics is everyone's.
TEST(SettingsTask, TwoFabricsOnOneMachineNeverTouchEachOthersJournals) {
  Places p;
  SettingsRequest apply = request(SettingsAction::apply, "soft", "198.18.1.11",
                                  {{"roce_np.min_time_between_cnps", "7", ""}});
  apply.fabric = "testbed-tb1";
  handle_settings(apply, p.places);  // no owner: as a dead run's
  SettingsRequest tb2 = request(SettingsAction::restore, "soft", "198.18.1.11");
  tb2.fabric = "testbed-tb2";
  const SettingsReply reply = handle_settings(tb2, p.places);
  EXPECT_FALSE(reply.journal_found);
  EXPECT_TRUE(reply.in_use.empty());
  EXPECT_TRUE(
      std::filesystem::exists(p.places.journal_dir + "/testbed-tb1/h1.soft-198.18.1.11.json"));

  SettingsRequest old = apply;
  old.fabric.clear();  // an older rocehil's journal, without a fabric
  old.values = {{"roce_rp.rpg_min_dec_fac", "20", ""}};
  handle_settings(old, p.places);
  ASSERT_TRUE(std::filesystem::exists(p.places.journal_dir + "/h1.soft-198.18.1.11.json"));
  const SettingsReply legacy = handle_settings(tb2, p.places);
  EXPECT_TRUE(legacy.journal_found);
  ASSERT_EQ(legacy.changes.size(), 1u);
  EXPECT_EQ(legacy.changes[0].name, "roce_rp.rpg_min_dec_fac");
}

TEST(SettingsTask, TheCatalogueMarksExactlyWhatTheSoftProviderTakes) {
  std::set<std::string> soft_names;
  for (const traffic::SoftSetting& s : traffic::soft_setting_defaults()) soft_names.insert(s.name);
  soft_names.insert({"pfc", "trust"});  // its QoS (SoftNic)
  std::set<std::string> marked;
  for (const settings::Setting& s : settings::catalogue())
    if (s.soft) marked.insert(std::string(s.name));
  EXPECT_EQ(marked, soft_names);
}

}  // namespace
}  // namespace rocehil::agent
