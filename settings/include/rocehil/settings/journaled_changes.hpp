#pragma once

// Changing settings as a run needs them, on a host's NICs or a testbed's switches: every change
// checked possible before any is made, each one journaled before it is written and read back
// after; and everything put back as it was, read back again, when the run is over (or by whoever
// finds the journal left).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/assignment.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/settings/journal_owner.hpp"
#include "rocehil/settings/target.hpp"

namespace rocehil::settings {

class JournaledChanges {
 public:
  // What a journal entry's netdev names ("" for what is not a NIC).
  using TargetFor = std::function<std::unique_ptr<Target>(const std::string& netdev)>;

  // The targets `target_for` gives; the journal at `journal`; `host` names the host (or the
  // switches) in messages and in the journal.
  JournaledChanges(TargetFor target_for, std::string journal, std::string host);
  // The NICs' files under `root` ("/" on a host).
  JournaledChanges(std::string root, std::string journal, std::string host);

  // Throws rocehil::Error (bad input) naming host, netdev and setting for the first assignment
  // a NIC cannot take (no such file, or set with a tool); changes nothing.
  void check(const std::vector<Assignment>& wanted, const std::vector<std::string>& netdevs) const;

  // Sets every assignment on every netdev, journal first. Values already in force are left
  // alone and not journaled. Returns the changes made. On a write the driver refuses or a
  // read-back that differs, puts back what it changed and throws rocehil::Error naming host,
  // netdev, setting, wanted and found. Refuses (infrastructure) while a journal is on the host:
  // another live run's (two runs cannot change one host at once), or one to restore first.
  // `owner` and `fabric` are recorded in the journal (journal_owner.hpp).
  std::vector<JournalEntry> apply(const std::vector<Assignment>& wanted,
                                  const std::vector<std::string>& netdevs, const std::string& run,
                                  const std::string& started_at,
                                  const std::optional<JournalOwner>& owner = std::nullopt,
                                  const std::string& fabric = {});

  // Puts back, newest first, what the journal on the host says, reads each back, and removes the
  // journal. Returns what was put back (nothing when there is no journal). Throws rocehil::Error
  // naming what could not be put back; the journal then stays for another try. Whatever the
  // journal's owner: for the owner itself; anyone else asks restore_left.
  std::vector<JournalEntry> restore();

  // What restore_left found.
  struct Left {
    std::optional<Journal> journal;      // the journal there was (nullopt: none)
    std::vector<JournalEntry> put_back;  // what was put back, newest first
    bool left_alone = false;             // its owner is alive, or cannot be judged here
  };
  // A journal someone else left: put back (restore()) only when `policy` allows it on `here`,
  // else left alone as it is. Throws as restore() does.
  Left restore_left(const RestorePolicy& policy, const Machine& here);

  const std::string& journal_path() const noexcept { return journal_; }

 private:
  TargetFor target_for_;
  std::string journal_, host_;
};

// Throws `failure` again once `put_back` has run, saying that what had been changed is back as it
// was, or, when putting back failed too, both errors.
[[noreturn]] void throw_after_putting_back(const Error& failure,
                                           const std::function<void()>& put_back);

}  // namespace rocehil::settings
