// The run's means for a test's events: what the inventory lets them act on, the switch commands
// they run (quoted), and the journal written before a link goes down and cleared once it is up.
#include "rocehil/run/fabric_events.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/settings/journal.hpp"

namespace rocehil::run {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view events_fabric = R"(schema_version: 1
name: small
defaults:
  provider: soft
hosts:
  - name: h1
    address: 10.0.0.1
    nics: [{netdev: eth1, ip: 198.18.1.11}]
    commands: {ping: "ping -c 1 198.18.1.12"}
  - name: h2
    address: 10.0.0.2
    nics: []
switches:
  - name: l1
    role: leaf
    address: 10.0.1.1
    link_down: "sudo config interface shutdown {port}"
    link_up: "sudo config interface startup {port}"
    commands: {drain: "sudo config bgp shutdown all"}
  - {name: l2, role: leaf, address: 10.0.1.2}
  - {name: s1, role: spine, netns: ns-s1}
  - {name: s2, role: spine, address: 10.0.1.9, snmp: {version: 2c, community_file: /c}}
  # No file can be under /dev/null: a SET stops at reading the secrets, before anything is sent.
  - name: s3
    role: spine
    address: 127.0.0.1
    snmp: {version: 2c, community_file: /dev/null/c, write_community_file: /dev/null/w}
  - {name: s4, role: spine, address: 10.0.1.11, snmp: {version: 3, user: u, writable: true}}
links:
  - {name: h1-l1, a: h1:eth1, b: l1:Ethernet0}
  - {name: l2-s1, a: l2:swp9, b: s1:swp1}
  - {name: l2-s2, a: l2:swp10, b: s2:swp1}
  - {name: l2-s3, a: l2:swp11, b: s3:swp1}
  - {name: l2-s4, a: l2:swp12, b: s4:swp1}
)";

inventory::Inventory events_inventory() {
  inventory::LoadResult r = inventory::parse_inventory(events_fabric, "f.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return std::move(r.inventory.value());
}

suites::Event event_of(suites::EventAction action) {
  suites::Event e;
  e.action = action;
  return e;
}

TEST(FabricEvents, WhatAnEventNamesMustBeInTheInventoryAndBeReachable) {
  const inventory::Inventory inv = events_inventory();
  using A = suites::EventAction;
  suites::Event e = event_of(A::link_down);
  e.link = "h1-l1";  // l1 has link_down
  EXPECT_EQ(event_problem(e, inv), "");
  e.link = "l2-s1";  // s1 is a testbed's namespace
  EXPECT_EQ(event_problem(e, inv), "");
  e.link = "l2-s3";  // s3 has a v2c write community
  EXPECT_EQ(event_problem(e, inv), "");
  e.link = "l2-s4";  // s4's v3 user is writable
  EXPECT_EQ(event_problem(e, inv), "");
  e.link = "l2-s2";  // s2 is polled over SNMP, but may not write
  EXPECT_EQ(event_problem(e, inv),
            "neither end of link 'l2-s2' (l2 and s2) is a switch rocehil can take it down on; "
            "give the switch link_down and link_up, or an SNMP write credential (snmp: "
            "write_community_file, or writable: true for version 3), in f.yaml (docs/inventory.md, "
            "\"Commands and link control\")");
  e.link = "l9-s9";
  EXPECT_EQ(event_problem(e, inv), "link 'l9-s9' is not in f.yaml's links");
  suites::Event nic = event_of(A::nic_down);
  nic.host = "h1";
  EXPECT_EQ(event_problem(nic, inv), "");
  nic.host = "h2";
  EXPECT_EQ(event_problem(nic, inv),
            "host 'h2' has no NIC with a netdev in f.yaml; name its RoCE netdev (nics: netdev)");
  nic.host = "h9";
  EXPECT_EQ(event_problem(nic, inv), "host 'h9' is not in f.yaml's hosts");
  suites::Event command = event_of(A::command);
  command.switch_name = "l1";
  command.command = "drain";
  EXPECT_EQ(event_problem(command, inv), "");
  command.command = "reboot";
  EXPECT_EQ(event_problem(command, inv),
            "switch 'l1' has no command 'reboot' in f.yaml (its commands: drain); add it under "
            "the switch's commands:");
  command.switch_name = "";
  command.host = "h2";
  EXPECT_EQ(event_problem(command, inv),
            "host 'h2' has no command 'reboot' in f.yaml (its commands: none); add it under the "
            "host's commands:");
}

TEST(FabricEvents, TheSwitchsPortIsOneQuotedWordWhateverItHolds) {
  EXPECT_EQ(port_command("sudo config interface shutdown {port}", "Ethernet0"),
            "sudo config interface shutdown 'Ethernet0'");
  EXPECT_EQ(port_command("nv set interface {port} link state down && nv config apply -y", "swp1"),
            "nv set interface 'swp1' link state down && nv config apply -y");
  // A port that would be two commands to a shell stays one word.
  EXPECT_EQ(port_command("shutdown {port}; echo {port}", "e1'; reboot; '"),
            "shutdown 'e1'\\''; reboot; '\\'''; echo 'e1'\\''; reboot; '\\'''");
}

// A journal directory of its own and a testbed whose link changes are recorded, with whether the
// journal already held the link when it went down.
class Journaled : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocehil-fabric-events-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    links_.name = "testbed-t1";
    links_.set_link = [this](std::string_view link, bool up) {
      const auto j = settings::load(journal());
      const bool journaled =
          j && std::any_of(j->entries.begin(), j->entries.end(),
                           [&](const settings::JournalEntry& e) { return e.netdev == link; });
      calls_.push_back(fmt::format("{} {} (journaled: {})", link, up ? "up" : "down", journaled));
      if (fail_) throw Error(ExitCode::infrastructure, "ip failed");
    };
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string journal() const { return (dir_ / "small" / "@down.json").string(); }
  FabricEvents events(const std::string& run) {
    return FabricEvents(inv_, "small", links_, nullptr, run, dir_.string());
  }

  inventory::Inventory inv_ = events_inventory();
  fs::path dir_;
  FabricLinkAccess links_;
  std::vector<std::string> calls_;
  bool fail_ = false;
};

TEST_F(Journaled, ALinkIsJournaledBeforeItGoesDownAndTheEntryClearedOnceItIsUp) {
  FabricEvents e = events("run-1");
  EXPECT_EQ(e.journal_path(), journal());
  EXPECT_EQ(e.link("l2-s1", false), "testbed-t1: ip link set down at both ends of l2-s1");
  const auto j = settings::load(journal());
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->run, "run-1");
  EXPECT_EQ(j->fabric, "small");
  ASSERT_TRUE(j->owner.has_value());
  EXPECT_EQ(j->owner->pid, getpid());
  ASSERT_EQ(j->entries.size(), 1u);
  EXPECT_EQ(j->entries[0].setting, "link");
  EXPECT_EQ(j->entries[0].netdev, "l2-s1");
  EXPECT_EQ(j->entries[0].before, "up");
  EXPECT_EQ(j->entries[0].wanted, "down");
  e.link("l2-s1", true);
  EXPECT_FALSE(fs::exists(journal()));
  EXPECT_EQ(calls_, (std::vector<std::string>{"l2-s1 down (journaled: true)",
                                              "l2-s1 up (journaled: true)"}));
  EXPECT_TRUE(e.bring_up_all().empty());  // nothing is down
}

TEST_F(Journaled, ALinkTakenDownOverSnmpIsJournaledAsSuchBeforeTheSetIsTried) {
  // No testbed: the link's switch end s3 has no link_down, but an SNMP write credential.
  FabricEvents e(inv_, "small", std::nullopt, nullptr, "run-1", dir_.string());
  try {
    e.link("l2-s3", false);
    FAIL() << "the write community file cannot be read, yet no error";
  } catch (const Error& err) {
    // The SET path was taken: it reads the write secret first, and says which it lacks.
    EXPECT_NE(std::string(err.what()).find("switch 's3': snmp write_community_file /dev/null/w"),
              std::string::npos)
        << err.what();
  }
  const auto j = settings::load(journal());
  ASSERT_TRUE(j.has_value());
  ASSERT_EQ(j->entries.size(), 1u);
  EXPECT_EQ(j->entries[0].netdev, "l2-s3");
  EXPECT_EQ(j->entries[0].where, "SNMP SET ifAdminStatus on s3 swp1");
}

TEST_F(Journaled, WhatIsStillDownAtTheEndComesUpNewestFirst) {
  FabricEvents e = events("run-1");
  e.link("l2-s1", false);
  e.link("h1-l1", false);
  const std::vector<BroughtUp> up = e.bring_up_all();
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(up[0].what, "link h1-l1");
  EXPECT_EQ(up[1].what, "link l2-s1");
  EXPECT_EQ(up[1].error, "");
  EXPECT_FALSE(fs::exists(journal()));
}

TEST_F(Journaled, ALinkThatFailedToComeUpStaysJournaledAndIsSaid) {
  FabricEvents e = events("run-1");
  e.link("l2-s1", false);
  fail_ = true;
  const std::vector<BroughtUp> up = e.bring_up_all();
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].error, "ip failed");
  EXPECT_TRUE(fs::exists(journal()));
}

TEST_F(Journaled, AKilledRunsLinksComeUpAtTheNextRestoreAndALiveRunsAreLeftAlone) {
  // A run that took two links down and was killed: its owner is a pid that runs no more.
  {
    FabricEvents killed = events("run-killed");
    killed.link("l2-s1", false);
    killed.link("h1-l1", false);
  }
  auto j = settings::load(journal()).value();
  j.owner->pid = 0x3ffffff;  // beyond pid_max: no such process
  settings::save(j, journal());
  calls_.clear();
  FabricEvents next = events("run-2");
  const LeftJournals left = next.restore_left();
  ASSERT_EQ(left.restored.size(), 2u);
  EXPECT_EQ(left.restored[0].host, "link h1-l1");
  EXPECT_EQ(left.restored[0].left_by, "run-killed");
  ASSERT_EQ(left.restored[0].changes.size(), 1u);
  EXPECT_EQ(left.restored[0].changes[0].name, "admin_state");
  EXPECT_EQ(left.restored[0].changes[0].wanted, "down");
  EXPECT_EQ(left.restored[0].changes[0].before, "up");
  EXPECT_EQ(left.restored[1].host, "link l2-s1");
  EXPECT_TRUE(left.in_use.empty());
  EXPECT_FALSE(fs::exists(journal()));
  EXPECT_EQ(calls_,
            (std::vector<std::string>{"h1-l1 up (journaled: true)", "l2-s1 up (journaled: true)"}));

  // A live run's (pid 1, as the kernel started it) is left alone, and refuses this run's downs.
  j.owner->pid = 1;
  j.owner->start_ticks = settings::process_start_ticks("/proc", 1).value();
  settings::save(j, journal());
  const LeftJournals alive = next.restore_left();
  EXPECT_TRUE(alive.restored.empty());
  ASSERT_EQ(alive.in_use.size(), 1u);
  EXPECT_EQ(alive.in_use[0].run, "run-killed");
  EXPECT_TRUE(alive.in_use[0].alive);
  EXPECT_THROW(next.link("l2-s1", false), Error);
  // ... unless forced.
  EXPECT_EQ(next.restore_left(true).restored.size(), 2u);
  EXPECT_FALSE(fs::exists(journal()));
}

}  // namespace
}  // namespace rocehil::run
