#pragma once

// What a host's settings were before rocehil changed them. An entry is written (the file
// replaced whole) before each change, so whatever ends the run afterwards (its end, an error,
// Ctrl-C, a controller killed outright) the values can be put back: by the run itself, or by the
// next run, selftest or `inventory check` that finds the journal left on the host, or by
// `rocehil settings restore`. Journals live in /run/rocehil/settings/: NIC settings written
// through sysfs and the QoS tools do not outlive a reboot, and neither does /run.

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

struct Journal {
  std::string host;  // the inventory's name of the host
  std::string run;   // the run (or bisection step) that made the changes
  std::string started_at;
  std::vector<JournalEntry> entries;  // in the order they were made
  bool operator==(const Journal&) const = default;
};

// DIR/HOST.json: hosts that share a file system (the testbed's namespaces) keep one each.
std::string journal_path(std::string_view dir, std::string_view host);
// Whether a journal's file name is `host`'s: "HOST.json", or its soft provider's
// "HOST.soft-ADDRESS.json".
bool is_journal_of(std::string_view file_name, std::string_view host);

nlohmann::json to_json(const Journal& journal);
// Throws rocehil::Error (infrastructure) naming `source` and the field when `j` is not a journal.
Journal journal_from_json(const nlohmann::json& j, std::string_view source);

// Writes `journal` to `path` whole (the directory made if missing).
void save(const Journal& journal, const std::string& path);
// The journal at `path`, or nullopt when there is none. Throws rocehil::Error (infrastructure)
// naming the file when it cannot be read or is not a journal: a journal is never ignored.
std::optional<Journal> load(const std::string& path);

}  // namespace rocehil::settings
