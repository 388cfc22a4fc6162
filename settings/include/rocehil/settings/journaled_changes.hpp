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
  // restore() it first.
  std::vector<JournalEntry> apply(const std::vector<Assignment>& wanted,
                                  const std::vector<std::string>& netdevs, const std::string& run,
                                  const std::string& started_at);

  // Puts back, newest first, what the journal on the host says, reads each back, and removes the
  // journal. Returns what was put back (nothing when there is no journal). Throws rocehil::Error
  // naming what could not be put back; the journal then stays for another try.
  std::vector<JournalEntry> restore();

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
