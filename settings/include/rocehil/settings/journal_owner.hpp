#pragma once

// Whether the run holding a journal is gone, so that someone else may put its settings back.
//
// A journal is held by the run's controller process. Its proof of life is the process itself:
// its pid, the start time the kernel gave that pid, and the boot id of the kernel it runs under.
// Whoever finds a journal asks the kernel the owner ran under, where it can: the same boot id
// means this kernel, and /proc then says whether that pid still runs and is the same process (a
// reused pid starts later). An owner under another kernel of the same machine (same machine id)
// died with that boot. An owner on another machine cannot be judged here: it is `elsewhere`, and
// the controller, which asks from its own machine, judges it there (fabric_settings.cpp).
//
// Why not flock(2) on the journal: the journal is written on the host by an agent that answers
// one request and exits (on stdio), so no process on the host lives as long as the run, and the
// run's controller is usually on another machine, where a lock cannot reach (nor over NFS). The
// pid, start time and boot id travel with the journal and can be judged wherever that process
// ran; on one machine (the testbed) they are as strong as a lock: the kernel's own record.

#include <optional>
#include <string>
#include <vector>

#include "rocehil/settings/journal.hpp"

namespace rocehil::settings {

// What this machine's kernel says, read once; tests make their own.
struct Machine {
  std::string name;        // host name
  std::string machine_id;  // /etc/machine-id ("" when unreadable)
  std::string boot_id;     // /proc/sys/kernel/random/boot_id
  std::string proc = "/proc";
};
// This machine. Throws rocehil::Error (infrastructure) naming the file when the boot id cannot be
// read (without it no owner can be judged, nor this process be one).
Machine this_machine();

// This process as the owner of the journals it writes. Throws as this_machine() does, or naming
// /proc/self/stat.
JournalOwner this_process(const Machine& here);

// The start time of `pid` in clock ticks since boot (/proc/PID/stat field 22), or nullopt when
// there is no such process or it is a zombie (it has exited; only its parent has not reaped it).
std::optional<std::uint64_t> process_start_ticks(const std::string& proc, std::int64_t pid);

enum class OwnerState {
  gone,       // no owner recorded (a journal of an older rocehil), or the kernel says it has ended
  alive,      // its process runs, under this kernel
  elsewhere,  // it ran on another machine: cannot be told here
};
OwnerState owner_state(const std::optional<JournalOwner>& owner, const Machine& here);

// Whose journal a restore may put back besides a gone owner's.
struct RestorePolicy {
  std::optional<JournalOwner> self{};  // the asking run: its own journal
  std::vector<JournalOwner> gone{};    // owners the asker found gone where they ran
  bool force = false;                  // a person said so: whatever the owner
};
// Whether `journal` may be put back under `policy`, judged on `here`.
bool may_put_back(const Journal& journal, const RestorePolicy& policy, const Machine& here);

// "run R (pid P on M) since T", or "run R (owner unknown)" for a journal without one.
std::string held_by_text(const Journal& journal);

}  // namespace rocehil::settings
