#pragma once

// What a host's settings were before rocehil changed them. An entry is written (the file
// replaced whole) before each change, so whatever ends the run afterwards (its end, an error,
// Ctrl-C, a controller killed outright) the values can be put back: by the run itself, or by the
// next run, selftest or `inventory check` that finds the journal left on the host, or by
// `rocehil settings restore`. Journals live in /run/rocehil/settings/: NIC settings written
// through sysfs and the QoS tools do not outlive a reboot, and neither does /run.
//
// A journal belongs to a fabric and to the run that holds it: only a journal whose run is known
// to be gone is put back by someone else (journal_owner.hpp); one held by a live run is left
// alone, so a second command never undoes a running run's settings under it.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::settings {

inline constexpr std::string_view default_journal_dir = "/run/rocehil/settings";

struct JournalEntry {
  std::string setting;  // the catalogue's name
  std::string netdev;   // empty for a setting of the fabric's links
  std::string where;    // the file (or tool) it was written through, for messages
  std::string before;   // canonical value in force before the change
  std::string wanted;   // canonical value written
  bool operator==(const JournalEntry&) const = default;
};

// The process that holds a journal: the run's controller. A pid alone is not a process (pids are
// reused, and the controller is often on another machine than the journal), so the owner is
// the pid with the start time the kernel gives it and the boot it ran under.
struct JournalOwner {
  std::string machine;     // its host name, for messages
  std::string machine_id;  // /etc/machine-id: tells "this machine, rebooted" from "another one"
  std::string boot_id;     // /proc/sys/kernel/random/boot_id of the kernel it ran under
  std::int64_t pid = 0;
  std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22: a reused pid starts later
  bool operator==(const JournalOwner&) const = default;
};

struct Journal {
  std::string host;  // the inventory's name of the host
  std::string run;   // the run (or bisection step) that made the changes
  std::string started_at;
  std::vector<JournalEntry> entries;  // in the order they were made
  // The fabric it was written for (fabric_id of the inventory; empty in a journal of a rocehil
  // before fabrics had one) and the process holding it (absent in such a journal: its owner is
  // unknown, and whoever finds it puts it back, as that rocehil did).
  std::string fabric;
  std::optional<JournalOwner> owner;
  bool operator==(const Journal&) const = default;
};

// DIR/FABRIC/NAME.json: a directory per fabric, so two fabrics whose hosts share names and
// addresses (two testbeds on one machine) never see each other's journals; hosts that share a
// file system (the testbed's namespaces) keep one each. An empty fabric gives DIR/NAME.json, the
// layout of the journals older rocehils wrote, which restores still look for.
std::string journal_path(std::string_view dir, std::string_view fabric, std::string_view name);
// Whether a journal's path relative to the journal directory is `host`'s in `fabric`:
// "FABRIC/HOST.json" or its soft provider's "FABRIC/HOST.soft-ADDRESS.json", or one of the old
// layout without a fabric ("HOST.json"), which any fabric's restore puts back.
bool is_journal_of(std::string_view relative_path, std::string_view host, std::string_view fabric);

nlohmann::json to_json(const Journal& journal);
// Throws rocehil::Error (infrastructure) naming `source` and the field when `j` is not a journal.
Journal journal_from_json(const nlohmann::json& j, std::string_view source);

// Writes `journal` to `path` whole (the directory made if missing).
void save(const Journal& journal, const std::string& path);
// The journal at `path`, or nullopt when there is none. Throws rocehil::Error (infrastructure)
// naming the file when it cannot be read or is not a journal: a journal is never ignored.
std::optional<Journal> load(const std::string& path);

}  // namespace rocehil::settings
