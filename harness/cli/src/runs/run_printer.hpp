#pragma once

#include <unistd.h>
#include <cstddef>

#include <optional>
#include <string>

#include "rocehil/run/events.hpp"
#include "shared/progress.hpp"

namespace rocehil::cli {

// How `rocehil run` (and the commands that run a suite inside them) shows a run: a line per case
// under a progress bar per test, then the verdict table. What goes wrong is said on stderr in
// every mode: a failed preflight and a history that could not be written.
class RunPrinter final : public run::RunEvents {
 public:
  enum class Stdout {
    text,   // lines and the verdict table
    json,   // run.json at the end, nothing else (--json)
    quiet,  // nothing: a caller prints its own result (bisect --json, selftest --json)
  };
  explicit RunPrinter(Stdout mode) : mode_(mode) {}

  void baseline_chosen(const std::string& run_id, const std::string& asked,
                       const std::string& origin) override;
  void baseline_lacks_cases(const std::string& run_id, const reports::RunKindInfo& kind,
                            const std::vector<std::string>& cases) override;
  void run_started(const Start& start) override;
  void preflight_progress(std::size_t done, std::size_t total) override;
  void preflight_ended(const preflight::CheckReport& report, std::size_t failed) override;
  void agents_joining(std::size_t joined, std::size_t total) override;
  void agents_joined(std::size_t joined, double seconds,
                     const std::vector<run::MissingAgent>& missing) override;
  void agent_refused(const std::string& peer, const std::string& why) override;
  void agent_lost(const std::string& host, const std::string& why) override;
  void test_started(const std::string& test, std::size_t cases) override;
  void case_progress(double fraction) override;
  void case_retried(const reports::CaseRecord& c) override;
  void case_ended(const reports::CaseRecord& c, std::size_t index) override;
  void test_ended() override;
  void history_not_updated(const std::string& why) override;
  void settings_left_restored(const run::SettingsRestored& restored) override;
  void settings_in_use(const run::JournalInUse& in_use) override;
  void settings_applied(const std::vector<run::SettingInForce>& in_force) override;
  void settings_failed(const std::string& why) override;
  void settings_restored(const std::vector<run::SettingsRestored>& restored) override;
  void settings_not_restored(const std::string& why) override;
  void settings_changed_under_run(const std::vector<run::SettingDrift>& drift) override;
  void nodes_drained(const std::vector<run::DrainResult>& drained,
                     const std::vector<std::string>& not_drained) override;
  void run_ended(const reports::RunRecord& record, const std::string& directory) override;

 private:
  bool speaks() const { return mode_ == Stdout::text; }
  void say(const std::string& text) const;

  Stdout mode_;
  std::string inventory_file_;
  // Bars only on a terminal: a log gets the one line per case that case_ended prints.
  bool bars_ = isatty(STDERR_FILENO) != 0;
  std::optional<Progress> preflight_bar_;
  std::optional<Progress> agents_bar_;
  std::optional<Progress> test_bar_;
  std::size_t case_index_ = 0;
};

}  // namespace rocehil::cli
