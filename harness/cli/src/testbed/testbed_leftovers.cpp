#include "testbed/testbed_leftovers.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "fabric/testbed_links.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/settings/journal.hpp"

namespace rocehil::cli {

namespace {

namespace fs = std::filesystem;

// Whether every change `journal` holds was made on one of the testbed's netdevs: a journal with
// any other entry (a real NIC of a host that happens to share the name) is not ours to drop.
bool names_only_testbed_netdevs(const settings::Journal& journal, std::string_view prefix) {
  return !journal.entries.empty() &&
         std::ranges::all_of(journal.entries, [prefix](const settings::JournalEntry& e) {
           return e.netdev.starts_with(prefix);
         });
}

std::vector<fs::path> entries_of(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  return out;
}

}  // namespace

DiscardedSettings discard_testbed_settings(std::string_view id, const std::string& journal_dir,
                                           const std::string& soft_dir) {
  DiscardedSettings out;
  if (id.empty()) return out;
  const std::string prefix = std::string(id) + "-";
  const std::string switches = testbed_switches_name(id);
  std::error_code ec;
  for (const fs::path& path : entries_of(journal_dir)) {
    const std::string name = path.filename().string();
    if (!name.ends_with(".json")) continue;
    bool ours = settings::is_journal_of(name, switches, "");
    if (!ours) {
      try {
        const auto journal = settings::load(path.string());
        ours = journal && names_only_testbed_netdevs(*journal, prefix);
      } catch (const Error&) {
        continue;
      }
    }
    if (ours && fs::remove(path, ec)) ++out.journals;
  }
  // The testbed's own fabric directory (its inventory is named "testbed-ID"): all of it is its.
  const fs::path own = fs::path(journal_dir) / switches;
  for (const fs::path& path : entries_of(own))
    if (path.filename().string().ends_with(".json") && fs::remove(path, ec)) ++out.journals;
  fs::remove(own, ec);  // only once empty: anything else in it stays to be looked at
  for (const fs::path& address : entries_of(soft_dir))
    for (const fs::path& netdev : entries_of(address / "sys/class/net"))
      if (netdev.filename().string().starts_with(prefix) && fs::remove_all(netdev, ec) > 0)
        ++out.soft_netdevs;
  return out;
}

}  // namespace rocehil::cli
