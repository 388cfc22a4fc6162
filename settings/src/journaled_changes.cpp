#include "rocehil/settings/journaled_changes.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/nic_files.hpp"

namespace rocehil::settings {

namespace {

// Writes `value` and reads it back; the error names what was found instead.
void write_and_check(const std::string& host, const Target& target, const Setting& s,
                     const std::string& value) {
  target.write(s, value);
  const std::optional<std::string> found = target.read(s);
  if (found != value)
    throw Error(ExitCode::infrastructure,
                fmt::format("host '{}': {}{}: wanted {}, found {} ({})", host,
                            target.netdev().empty() ? "" : target.netdev() + " ", s.name, value,
                            found.value_or("nothing"), target.where(s)));
}

}  // namespace

JournaledChanges::JournaledChanges(TargetFor target_for, std::string journal, std::string host)
    : target_for_(std::move(target_for)), journal_(std::move(journal)), host_(std::move(host)) {}

JournaledChanges::JournaledChanges(std::string root, std::string journal, std::string host)
    : JournaledChanges(
          [root = std::move(root)](const std::string& netdev) -> std::unique_ptr<Target> {
            return std::make_unique<NicFiles>(root, netdev);
          },
          std::move(journal), std::move(host)) {}

void JournaledChanges::check(const std::vector<Assignment>& wanted,
                             const std::vector<std::string>& netdevs) const {
  for (const std::string& netdev : netdevs) {
    const std::unique_ptr<Target> target = target_for_(netdev);
    for (const Assignment& a : wanted) {
      std::string why_not;
      if (!target->has(*a.setting, &why_not))
        throw input_error(fmt::format("{}{}host '{}': cannot set {}: {}", a.origin,
                                      a.origin.empty() ? "" : ": ", host_, a.setting->name,
                                      why_not));
    }
  }
}

std::vector<JournalEntry> JournaledChanges::apply(const std::vector<Assignment>& wanted,
                                                  const std::vector<std::string>& netdevs,
                                                  const std::string& run,
                                                  const std::string& started_at,
                                                  const std::optional<JournalOwner>& owner,
                                                  const std::string& fabric) {
  if (const std::optional<Journal> left = load(journal_)) {
    // Judged on this machine when the owner ran here (the testbed, the switches' journal);
    // otherwise the wording covers both.
    std::optional<Machine> here;
    try {
      here = this_machine();
    } catch (const Error&) {
    }
    if (left->owner && here && owner_state(left->owner, *here) == OwnerState::alive)
      throw Error(ExitCode::infrastructure,
                  fmt::format("host '{}': {} is in use by {}: two runs cannot change one host's "
                              "settings at once; wait for it to end",
                              host_, journal_, held_by_text(*left)));
    throw Error(ExitCode::infrastructure,
                fmt::format("host '{}': {} holds the settings changed by {}, not put back; "
                            "restore them first ('rocehil settings restore')",
                            host_, journal_, held_by_text(*left)));
  }
  check(wanted, netdevs);
  Journal journal{host_, run, started_at, {}, fabric, owner};
  try {
    for (const std::string& netdev : netdevs) {
      const std::unique_ptr<Target> target = target_for_(netdev);
      for (const Assignment& a : wanted) {
        const std::string before = target->read(*a.setting).value_or("");
        if (before == a.value) continue;
        journal.entries.push_back(
            {std::string(a.setting->name), netdev, target->where(*a.setting), before, a.value});
        save(journal, journal_);  // before the change: a crash after it leaves the way back
        write_and_check(host_, *target, *a.setting, a.value);
      }
    }
  } catch (const Error& e) {
    if (journal.entries.empty()) throw;
    throw_after_putting_back(e, [this] { restore(); });
  }
  return journal.entries;
}

std::vector<JournalEntry> JournaledChanges::restore() {
  const std::optional<Journal> journal = load(journal_);
  if (!journal) return {};
  std::vector<std::string> failed;
  std::vector<JournalEntry> restored;
  for (auto e = journal->entries.rbegin(); e != journal->entries.rend(); ++e) {
    const Setting* s = find(e->setting);
    if (s == nullptr) {
      failed.push_back(
          fmt::format("{} {}: not a setting this rocehil knows", e->netdev, e->setting));
      continue;
    }
    if (e->before.empty()) {  // nothing was read before: nothing to put back
      continue;
    }
    try {
      write_and_check(journal->host, *target_for_(e->netdev), *s, e->before);
      restored.push_back(*e);
    } catch (const Error& err) {
      failed.push_back(err.what());
    }
  }
  if (!failed.empty())
    throw Error(ExitCode::infrastructure,
                fmt::format("host '{}': could not put back {} of the settings in {}: {}",
                            journal->host, failed.size(), journal_, failed.front()));
  if (std::remove(journal_.c_str()) != 0)
    throw system_error(fmt::format("host '{}': settings are back, but {} could not be removed",
                                   journal->host, journal_),
                       errno);
  return restored;
}

JournaledChanges::Left JournaledChanges::restore_left(const RestorePolicy& policy,
                                                      const Machine& here) {
  Left out;
  out.journal = load(journal_);
  if (!out.journal) return out;
  if (!may_put_back(*out.journal, policy, here)) {
    out.left_alone = true;
    return out;
  }
  out.put_back = restore();
  return out;
}

void throw_after_putting_back(const Error& failure, const std::function<void()>& put_back) {
  try {
    put_back();
  } catch (const Error& again) {
    throw Error(failure.exit_code(), fmt::format("{}; and putting the values back failed too: {}",
                                                 failure.what(), again.what()));
  }
  throw Error(failure.exit_code(),
              fmt::format("{} (what had been changed is back as it was)", failure.what()));
}

}  // namespace rocehil::settings
