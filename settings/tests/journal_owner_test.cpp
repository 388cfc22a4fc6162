// Who holds a journal, and whether that run is gone: judged by the kernel on real processes (a
// child forked and killed for real), never by a clock; and a journal held by a live run is left
// alone by whoever else finds it.

#include "rocehil/settings/journal_owner.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "fake_host.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/settings/journaled_changes.hpp"

namespace rocehil::settings {
namespace {

using testing::FakeHost;

// A child that waits to be killed: a run's controller, as far as its journal can tell.
class Child {
 public:
  Child() {
    pid_ = ::fork();
    if (pid_ == 0) {
      for (;;) ::pause();
    }
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Killed, and known to the kernel as exited, but not reaped: a zombie.
  void kill_leaving_zombie() {
    ::kill(pid_, SIGKILL);
    siginfo_t info{};
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT), 0);
  }
  void reap() {
    ASSERT_EQ(::waitpid(pid_, nullptr, 0), pid_);
    reaped_ = pid_;
    pid_ = 0;
  }
  pid_t pid() const { return pid_ > 0 ? pid_ : reaped_; }

  JournalOwner owner(const Machine& here) const {
    const std::optional<std::uint64_t> start = process_start_ticks(here.proc, pid_);
    EXPECT_TRUE(start);
    return {here.name, here.machine_id, here.boot_id, pid_, start.value_or(0)};
  }

 private:
  pid_t pid_ = 0;
  pid_t reaped_ = 0;
};

TEST(JournalOwner, ThisProcessIsAliveHere) {
  const Machine here = this_machine();
  EXPECT_FALSE(here.boot_id.empty());
  const JournalOwner me = this_process(here);
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_EQ(owner_state(me, here), OwnerState::alive);
}

TEST(JournalOwner, AKilledOwnerIsGoneAsAZombieAndOnceReaped) {
  const Machine here = this_machine();
  Child child;
  const JournalOwner owner = child.owner(here);
  EXPECT_EQ(owner_state(owner, here), OwnerState::alive);
  child.kill_leaving_zombie();
  EXPECT_EQ(owner_state(owner, here), OwnerState::gone) << "a zombie runs nothing";
  child.reap();
  EXPECT_EQ(owner_state(owner, here), OwnerState::gone);
}

// The same pid started at another time is another process: the owner's pid reused.
TEST(JournalOwner, AReusedPidIsNotTheOwner) {
  const Machine here = this_machine();
  Child child;
  JournalOwner owner = child.owner(here);
  owner.start_ticks -= 1;
  EXPECT_EQ(owner_state(owner, here), OwnerState::gone);
}

TEST(JournalOwner, AnOwnerUnderAnotherKernelIsElsewhereOrGoneWithItsBoot) {
  Machine here = this_machine();
  here.machine_id = "ours";
  Child child;
  JournalOwner owner = child.owner(here);
  owner.boot_id = "another-boot";
  owner.machine_id = "another-machine";
  EXPECT_EQ(owner_state(owner, here), OwnerState::elsewhere) << "cannot be told here";
  owner.machine_id = "ours";  // this machine before it rebooted
  EXPECT_EQ(owner_state(owner, here), OwnerState::gone);
  owner.machine_id = "";  // a machine without a machine id: cannot be told either
  EXPECT_EQ(owner_state(owner, here), OwnerState::elsewhere);
}

TEST(JournalOwner, WhoMayPutAJournalBack) {
  const Machine here = this_machine();
  Child child;
  Journal journal{"h1", "run-live", "2026-11-26T18:15:00Z", {}, "fab", child.owner(here)};
  EXPECT_FALSE(may_put_back(journal, {}, here)) << "its run is alive";
  EXPECT_TRUE(may_put_back(journal, {.self = journal.owner}, here)) << "the run itself";
  EXPECT_TRUE(may_put_back(journal, {.gone = {*journal.owner}}, here));
  EXPECT_TRUE(may_put_back(journal, {.force = true}, here));
  EXPECT_EQ(held_by_text(journal), fmt::format("run run-live (pid {} on {}) since "
                                               "2026-11-26T18:15:00Z",
                                               child.pid(), here.name));
  Journal old = journal;
  old.owner.reset();  // an older rocehil's: owner unknown, put back as that rocehil did
  EXPECT_TRUE(may_put_back(old, {}, here));
  EXPECT_EQ(held_by_text(old), "run run-live (owner unknown)");
}

struct OwnedChanges {
  FakeHost host;
  std::string journal = journal_path(host.file("run/rocehil/settings"), "fab", "h1");
  JournaledChanges changes{host.root(), journal, "h1"};
  std::vector<Assignment> wanted = {assign("roce_np.min_time_between_cnps", "7", "--set")};
  std::string cnps() const {
    return host.value("sys/class/net/eth1/ecn/roce_np/min_time_between_cnps");
  }
};

// The issue: a second command put back a running run's setting (7 -> 4 here) under it. Another
// command's restore now leaves a live run's journal and its values alone, and puts them back
// once that run is gone.
TEST(JournalOwner, ALiveRunsJournalIsLeftAloneByAnotherRestoreAndPutBackOnceItIsGone) {
  const Machine here = this_machine();
  OwnedChanges c;
  Child run;
  c.changes.apply(c.wanted, {"eth1"}, "run-live", "t", run.owner(here), "fab");
  ASSERT_EQ(c.cnps(), "7");
  EXPECT_EQ(load(c.journal)->owner, run.owner(here));
  EXPECT_EQ(load(c.journal)->fabric, "fab");

  JournaledChanges other(c.host.root(), c.journal, "h1");  // inventory check, settings restore
  const JournaledChanges::Left left = other.restore_left({}, here);
  EXPECT_TRUE(left.left_alone);
  ASSERT_TRUE(left.journal);
  EXPECT_EQ(left.journal->run, "run-live");
  EXPECT_TRUE(left.put_back.empty());
  EXPECT_EQ(c.cnps(), "7") << "the live run's setting was put back under it";
  EXPECT_TRUE(std::filesystem::exists(c.journal));

  // Nor can a second run change the host on top of it.
  try {
    other.apply(c.wanted, {"eth1"}, "run-2", "t", this_process(here), "fab");
    ADD_FAILURE() << "applied on top of a live run's settings";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find(fmt::format("is in use by run run-live (pid {} on", run.pid())),
        std::string::npos)
        << e.what();
  }

  run.kill_leaving_zombie();
  run.reap();
  const JournaledChanges::Left after = other.restore_left({}, here);
  EXPECT_FALSE(after.left_alone);
  EXPECT_EQ(after.put_back.size(), 1u);
  EXPECT_EQ(c.cnps(), "4");
  EXPECT_FALSE(std::filesystem::exists(c.journal));
}

// A journal an older rocehil left (no owner, the old file name) is still put back.
TEST(JournalOwner, AnOlderRocehilsJournalIsPutBack) {
  const Machine here = this_machine();
  OwnedChanges c;
  const std::string old_path = journal_path(c.host.file("run/rocehil/settings"), "", "h1");
  JournaledChanges old(c.host.root(), old_path, "h1");
  old.apply(c.wanted, {"eth1"}, "old-run", "t");
  ASSERT_EQ(c.cnps(), "7");
  EXPECT_EQ(load(old_path)->owner, std::nullopt);
  const JournaledChanges::Left left = old.restore_left({}, here);
  EXPECT_FALSE(left.left_alone);
  EXPECT_EQ(left.put_back.size(), 1u);
  EXPECT_EQ(c.cnps(), "4");
}

}  // namespace
}  // namespace rocehil::settings
