#include "rocehil/settings/journal_owner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

#include "rocehil/common/error.hpp"

namespace rocehil::settings {

namespace {

std::optional<std::string> line_of_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  return line;
}

// /proc/PID/stat: "pid (comm) state ppid ... starttime ...". comm may hold spaces and
// parentheses, so the fields are counted from after the last ')': state is field 3, starttime 22.
struct Stat {
  char state = '?';
  std::uint64_t start_ticks = 0;
};
std::optional<Stat> read_stat(const std::string& proc, std::int64_t pid) {
  std::ifstream in(fmt::format("{}/{}/stat", proc, pid));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const auto close = s.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(s.substr(close + 1));
  Stat out;
  fields >> out.state;
  std::string skipped;
  for (int field = 4; field < 22; ++field) fields >> skipped;
  if (!(fields >> out.start_ticks)) return std::nullopt;
  return out;
}

}  // namespace

Machine this_machine() {
  Machine m;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0) m.name = name;
  m.machine_id = line_of_file("/etc/machine-id").value_or("");
  const std::optional<std::string> boot = line_of_file("/proc/sys/kernel/random/boot_id");
  if (!boot || boot->empty())
    throw system_error(
        "cannot read /proc/sys/kernel/random/boot_id, which tells whether the run "
        "holding a settings journal is alive; is /proc mounted?",
        errno);
  m.boot_id = *boot;
  return m;
}

JournalOwner this_process(const Machine& here) {
  const std::int64_t pid = ::getpid();
  const std::optional<std::uint64_t> start = process_start_ticks(here.proc, pid);
  if (!start)
    throw system_error(fmt::format("cannot read {}/{}/stat, which says when this process started "
                                   "(a settings journal names its owner by it); is /proc mounted?",
                                   here.proc, pid),
                       errno);
  return {here.name, here.machine_id, here.boot_id, pid, *start};
}

std::optional<std::uint64_t> process_start_ticks(const std::string& proc, std::int64_t pid) {
  if (pid <= 0) return std::nullopt;
  const std::optional<Stat> stat = read_stat(proc, pid);
  // A zombie (Z) or a dead task (X) holds nothing any more: its run is over.
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return stat->start_ticks;
}

OwnerState owner_state(const std::optional<JournalOwner>& owner, const Machine& here) {
  if (!owner) return OwnerState::gone;
  if (owner->boot_id == here.boot_id) {
    const std::optional<std::uint64_t> start = process_start_ticks(here.proc, owner->pid);
    return start == owner->start_ticks ? OwnerState::alive : OwnerState::gone;
  }
  // Its kernel is not this one: on this machine that boot has ended, and its processes with it.
  if (!owner->machine_id.empty() && owner->machine_id == here.machine_id) return OwnerState::gone;
  return OwnerState::elsewhere;
}

bool may_put_back(const Journal& journal, const RestorePolicy& policy, const Machine& here) {
  if (policy.force) return true;
  if (journal.owner && policy.self == journal.owner) return true;
  if (journal.owner &&
      std::find(policy.gone.begin(), policy.gone.end(), *journal.owner) != policy.gone.end())
    return true;
  return owner_state(journal.owner, here) == OwnerState::gone;
}

std::string held_by_text(const Journal& journal) {
  if (!journal.owner) return fmt::format("run {} (owner unknown)", journal.run);
  return fmt::format("run {} (pid {} on {}) since {}", journal.run, journal.owner->pid,
                     journal.owner->machine.empty() ? "an unnamed machine" : journal.owner->machine,
                     journal.started_at.empty() ? "an unknown time" : journal.started_at);
}

}  // namespace rocehil::settings
