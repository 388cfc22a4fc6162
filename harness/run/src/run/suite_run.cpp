#include "rocehil/run/suite_run.hpp"
#include "run/run_agents.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "basics/read_file.hpp"
#include "cases/capture_keeping.hpp"
#include "cases/case_attempt.hpp"
#include "cases/qp_capacity.hpp"
#include "metrics/switch_polling.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"
#include "rocehil/preflight/inventory_check.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/remote/this_executable.hpp"
#include "rocehil/reports/comparison.hpp"
#include "rocehil/reports/history.hpp"
#include "rocehil/reports/html_report.hpp"
#include "rocehil/reports/junit.hpp"
#include "rocehil/reports/run_directory.hpp"
#include "rocehil/reports/run_json.hpp"
#include "rocehil/run/drain.hpp"
#include "rocehil/run/fabric_events.hpp"
#include "rocehil/run/suite_check.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/suites/starvation.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {

namespace {

std::int64_t unix_s_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A private directory for ssh's multiplexing sockets, removed (masters stopped) at the end.
class MultiplexDir {
 public:
  // The masters it stops at the end are those of `hosts` reached over ssh.
  explicit MultiplexDir(const std::vector<const inventory::Host*>& hosts) {
    char path[] = "/tmp/rocehil-ssh-XXXXXX";
    if (mkdtemp(path) == nullptr)
      throw system_error("cannot make a directory for ssh's shared connections", errno);
    multiplex_.control_dir = path;
    for (const auto* h : hosts)
      if (h->launcher == inventory::Launcher::ssh) hosts_.push_back(h);
  }
  ~MultiplexDir() {
    // In parallel: one after another, 256 hosts' `ssh -O exit` kept a finished run 5 s longer.
    remote::fan_out(hosts_.size(), 32, [&](std::size_t i) {
      remote::run_command(remote::ssh_multiplex_exit(*hosts_[i], multiplex_),
                          {.timeout = std::chrono::seconds(5)});
    });
    // A master that was still starting when the exits went out takes its socket with it as it
    // ends; until then the directory cannot go (a 256-host run left one behind, empty).
    for (int tries = 0; tries < 20; ++tries) {
      std::error_code ec;
      std::filesystem::remove_all(multiplex_.control_dir, ec);
      if (!ec || !std::filesystem::exists(multiplex_.control_dir, ec)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  MultiplexDir(const MultiplexDir&) = delete;
  MultiplexDir& operator=(const MultiplexDir&) = delete;
  const remote::SshMultiplex* get() const { return &multiplex_; }

 private:
  remote::SshMultiplex multiplex_;
  std::vector<const inventory::Host*> hosts_;
};

class Run {
 public:
  Run(const SuiteRunOptions& o, const std::atomic<bool>& interrupt, RunEvents& events)
      : o_(o), interrupt_(interrupt), events_(events) {}

  // Empty until the run directory exists.
  std::string run_id() const { return directory_ ? directory_->run_id() : std::string(); }

  int go() {
    suites::SuiteLoadResult loaded = suites::parse_suite_file(o_.suite_file);
    if (!loaded.suite) throw_suite_problems(loaded);
    suite_ = std::move(*loaded.suite);
    inventory_ = inventory::load_inventory(o_.inventory_file);
    const std::size_t listed = inventory_.hosts.size();
    apply_host_options();
    select_cases();
    // Only the tests that will run are held against the inventory: with --only p2p_* and
    // --hosts narrowing it, a collective's capture host need not be there.
    suites::Suite running = suite_;
    running.tests.clear();
    for (std::size_t t = 0; t < suite_.tests.size(); ++t)
      if (!skip_reason(suite_.tests[t].name) &&
          std::any_of(cases_.begin(), cases_.end(),
                      [&](const suites::TestCase& tc) { return tc.test == t; }))
        running.tests.push_back(suite_.tests[t]);
    if (const auto problems = check_suite_against_inventory(running, inventory_);
        !problems.empty()) {
      std::string text;
      for (const auto& p : problems) {
        if (!text.empty()) text += '\n';
        text += p;
      }
      if (!o_.hosts.empty())
        text += fmt::format(" (--hosts '{}' left {} of its {} hosts)", o_.hosts,
                            inventory_.hosts.size(), listed);
      throw input_error(text);
    }
    // The switches' secrets are read now: a missing one stops the run before anything starts.
    if (o_.switches) switch_polling_ = SwitchPolling::for_inventory(inventory_);
    self_ = remote::this_executable();
    resolve_baseline();
    begin_record();
    directory_.emplace(reports::RunDirectory::create(
        o_.reports_dir, reports::make_run_id(unix_s_now(), suite_.name)));
    record_.run_id = directory_->run_id();
    keeping_ =
        capture_keeping(suite_.capture, o_.keep_captures, directory_->run_id(), directory_->path());
    save();
    events_.run_started({.suite_name = suite_.name,
                         .suite_file = o_.suite_file,
                         .inventory_name = inventory_.name,
                         .inventory_file = o_.inventory_file,
                         .cases = cases_.size(),
                         .hosts = hosts_.size(),
                         .directory = directory_->path()});
    // One ssh connection per host for the whole run: the preflight's probe opens it, and the
    // settings, agents and captures after it reuse it instead of paying for a handshake each.
    multiplex_.emplace(hosts_);
    if (!preflight()) return finish();
    if (!start_agents()) return finish();
    if (!apply_settings()) return finish();
    try {
      run_cases();
    } catch (...) {
      restore_settings();
      throw;
    }
    restore_settings();
    return finish();
  }

 private:
  const std::string* skip_reason(const std::string& test) const {
    for (const auto& s : o_.skip)
      if (s.test == test) return &s.reason;
    return nullptr;
  }

  CaseContext context_for(const suites::TestCase& tc) {
    return {.inventory = &inventory_,
            .suite = &suite_,
            .test = &suite_.tests[tc.test],
            .test_case = &tc,
            .multiplex = multiplex_ ? multiplex_->get() : nullptr,
            .dialed = agents_ ? &agents_->dialed() : nullptr,
            .self = self_,
            .timeout = o_.timeout,
            .fanout = o_.fanout,
            .interrupt = &interrupt_,
            .on_progress = {},
            .switch_polling = switch_polling_.get(),
            .keeping = &keeping_,
            .fabric_actions = fabric_events_.get()};
  }

  // --hosts narrows the inventory to the hosts it selects (the suite then sees only those, and
  // says so for a test that needs another); --launcher replaces every host's launcher.
  void apply_host_options() {
    if (!o_.hosts.empty()) {
      std::set<std::string> keep;
      for (const inventory::Host* h : inventory::select_hosts(inventory_, o_.hosts))
        keep.insert(h->name);
      std::erase_if(inventory_.hosts,
                    [&](const inventory::Host& h) { return !keep.contains(h.name); });
    }
    if (o_.launcher)
      for (inventory::Host& h : inventory_.hosts) h.launcher = *o_.launcher;
  }

  void select_cases() {
    for (auto& tc : suites::expand(suite_))
      if (o_.only.empty() || inventory::glob_match(o_.only, tc.id)) cases_.push_back(tc);
    if (cases_.empty())
      throw input_error(
          fmt::format("--only '{}' matches none of {}'s cases (list them with "
                      "'rocehil suite cases {}')",
                      o_.only, o_.suite_file, o_.suite_file));
  }

  // Every case listed as not run, with its hosts and names, before anything runs.
  void begin_record() {
    record_.started_at = reports::iso_utc(unix_s_now());
    record_.rocehil_version = ROCEHIL_VERSION;
    record_.command_line = o_.command_line;
    std::vector<std::string> set;
    for (const auto& a : o_.settings) set.push_back(fmt::format("{}={}", a.setting->name, a.value));
    record_.kind = reports::kind_of_run(o_.started_as, o_.only, std::move(set));
    record_.suite_file = o_.suite_file;
    record_.suite_name = suite_.name;
    record_.suite_text = read_file(o_.suite_file, "suite");
    record_.inventory_file = o_.inventory_file;
    record_.inventory_text = read_file(o_.inventory_file, "inventory");
    std::set<std::string> host_names;
    for (const auto& tc : cases_) {
      const auto& test = suite_.tests[tc.test];
      reports::CaseRecord c;
      c.id = tc.id;
      c.test = test.name;
      c.workload = test.workload;
      c.parameters = {{"size", tc.size},
                      {"qps", tc.qps},
                      {"strategy", tc.strategy},
                      {"placement", tc.placement},
                      {"traffic_class", tc.traffic_class}};
      // Classes spread over the QPs: QP i of each connection used item i % n.
      if (!tc.per_qp_traffic_classes.empty())
        c.parameters["traffic_class_per_qp"] = tc.per_qp_traffic_classes;
      c.captures = test.settings.captures;
      c.expect_fail = test.expect_fail;
      if (const std::string* reason = skip_reason(test.name)) {
        // Not run, so nothing of it is preflighted or held against the inventory.
        c.skip_reason = *reason;
        c.outcome = reports::outcome_of(c);
        record_.cases.push_back(std::move(c));
        continue;
      }
      const CaseShape shape = case_shape(context_for(tc));
      c.hosts = shape.hosts;
      c.names = shape.names;
      // baseline.<metric>: the median of the baseline run's repeats of the same case.
      if (const auto b = baseline_samples_.find(c.id); b != baseline_samples_.end())
        for (const auto& [metric, values] : b->second)
          if (!values.empty()) c.names["baseline." + metric] = reports::median(values);
      host_names.insert(shape.hosts.begin(), shape.hosts.end());
      for (const auto& p : test.settings.captures)
        host_names.insert(inventory_.find_capture(p)->host);
      if (test.inject && inventory_.find_host(test.inject->from) != nullptr)
        host_names.insert(test.inject->from);
      record_.cases.push_back(std::move(c));
    }
    for (const auto& h : inventory_.hosts)
      if (host_names.count(h.name) != 0) hosts_.push_back(&h);
  }

  void save() { directory_->write("run.json", reports::to_json(record_).dump(2) + "\n"); }

  // Every host the suite uses answers over ssh and is what the inventory says, before any case.
  bool preflight() {
    preflight::CheckOptions options;
    options.fanout = o_.fanout;
    options.timeout = std::chrono::seconds(std::max<long>(o_.timeout.count(), 30));
    options.deploy = o_.deploy;
    options.packages = o_.deploy_packages;
    options.local_binary = self_;
    options.multiplex = multiplex_->get();
    options.controller_version = fmt::format("rocehil {}", ROCEHIL_VERSION);
    options.on_progress = [this](std::size_t done, std::size_t total) {
      events_.preflight_progress(done, total);
    };
    std::string names;
    for (const auto* h : hosts_) {
      if (!names.empty()) names += ',';
      names += h->name;
    }
    preflight::CheckReport report = preflight::check_hosts(inventory_, hosts_, names, options);
    // Each verbs NIC against the most QPs a case asks of it (its max_qp, from the probe).
    case_traffic::check_qp_capacity(report, case_traffic::qp_demands(inventory_, suite_, cases_),
                                    [this](const std::string& host) {
                                      const inventory::Host* h = inventory_.find_host(host);
                                      return h == nullptr ? std::string() : provider_on(*h);
                                    });
    record_.preflight = to_json(report);
    save();
    const auto bad = static_cast<std::size_t>(
        std::count_if(report.hosts.begin(), report.hosts.end(), [](const auto& h) {
          return h.verdict == preflight::HostVerdict::unreachable ||
                 h.verdict == preflight::HostVerdict::failed;
        }));
    for (const auto& h : report.hosts)
      if (h.facts)
        for (const std::string& j : h.facts->settings_journals)
          if (settings::is_journal_of(j, h.host, fabric_id(inventory_)))
            hosts_with_journals_.insert(h.host);
    events_.preflight_ended(report, bad);
    preflight_failed_ = bad != 0;
    return !preflight_failed_;
  }

  // The provider a host's traffic uses in this run: the tests' own, else the inventory's.
  std::string provider_on(const inventory::Host& h) const {
    for (const auto& tc : cases_)
      if (const std::string& p = suite_.tests[tc.test].settings.provider; !p.empty()) return p;
    return std::string(inventory::to_string(h.provider));
  }

  // Journals a killed controller left are put back first, whether or not this run sets
  // anything: a fabric left changed would be measured as if it were the site's. Then the suite's
  // and --set's settings, read back; a failure stops the run before traffic (exit 2 or 3), with
  // whatever had been changed put back.
  bool apply_settings() {
    if (!restore_fabric_events()) return false;
    const std::vector<settings::Assignment> wanted = settings::merge(suite_.settings, o_.settings);
    // A test's own settings need the run's hold on the hosts' settings even when the run as a
    // whole sets nothing.
    const bool tests_set = std::any_of(cases_.begin(), cases_.end(), [this](const auto& tc) {
      return !suite_.tests[tc.test].fabric_settings.empty() &&
             !skip_reason(suite_.tests[tc.test].name);
    });
    std::vector<SettingsHost> hosts;
    for (const auto* h : hosts_) hosts.push_back({h, provider_on(*h)});
    try {
      fabric_settings_ = std::make_unique<FabricSettings>(
          std::move(hosts), fabric_id(inventory_), o_.fabric_links, multiplex_->get(), o_.timeout);
      if (agents_) fabric_settings_->ask_through(agents_->dialed());
      const auto journal_on = [this](const inventory::Host& h) {
        return hosts_with_journals_.contains(h.name);
      };
      // Another live run's journal is left alone (said); applying on top of it is refused below.
      const LeftJournals left = fabric_settings_->restore_left(journal_on);
      for (const SettingsRestored& r : left.restored) events_.settings_left_restored(r);
      for (const JournalInUse& u : left.in_use) events_.settings_in_use(u);
    } catch (const Error& e) {
      // A user who cannot be root cannot have left a journal; without settings to set, the run
      // goes on.
      if (wanted.empty() && !tests_set && e.exit_code() == ExitCode::bad_input) {
        fabric_settings_.reset();
        return true;
      }
      return settings_failed(e);
    }
    if (wanted.empty() && !tests_set) {
      fabric_settings_.reset();
      return true;
    }
    if (wanted.empty()) return true;
    try {
      fabric_settings_->apply(wanted, record_.run_id);
    } catch (const Error& e) {
      record_.fabric_settings = settings_json(wanted, *fabric_settings_);
      return settings_failed(e);
    }
    record_.fabric_settings = settings_json(wanted, *fabric_settings_);
    record_.fabric_settings["restored"] = false;
    save();
    events_.settings_applied(fabric_settings_->in_force());
    return true;
  }

  // Links and NICs a killed run's events left down are brought up first, and said, as settings
  // are put back; then this run's events act through the same journal (fabric_events.hpp).
  bool restore_fabric_events() {
    try {
      fabric_events_ = std::make_unique<FabricEvents>(
          inventory_, fabric_id(inventory_), o_.fabric_links, multiplex_->get(), record_.run_id);
      const LeftJournals left = fabric_events_->restore_left();
      for (const SettingsRestored& r : left.restored) events_.settings_left_restored(r);
      for (const JournalInUse& u : left.in_use) events_.settings_in_use(u);
    } catch (const Error& e) {
      return settings_failed(e);
    }
    return true;
  }

  bool settings_failed(const Error& e) {
    settings_error_ = static_cast<int>(e.exit_code());
    if (record_.fabric_settings.is_null()) record_.fabric_settings = nlohmann::json::object();
    record_.fabric_settings["error"] = e.what();
    save();
    settings_stopped_run_ = true;
    fabric_settings_.reset();
    events_.settings_failed(e.what());
    return false;
  }

  // A number measured under a setting other than the run's must not read as measured under it:
  // after each attempt the settings the run changed are read back, and an attempt that ended
  // with one changed under the run (another command, a person, the NIC's driver) is an error
  // naming it: its metrics stay in run.json, ungraded. It costs one read of the changed hosts an
  // attempt, in runs that set something.
  void check_settings_held(const reports::CaseRecord& c, reports::Attempt& a) {
    if (!fabric_settings_) return;
    std::vector<SettingDrift> drift;
    try {
      drift = fabric_settings_->changed_under_run();
    } catch (const Error& e) {
      if (!a.error)
        a.error = reports::AttemptError{
            "", "settings",
            fmt::format("the run's settings could not be read back after the attempt, so what "
                        "it measured cannot be said to be under them: {}",
                        e.what())};
      return;
    }
    if (drift.empty()) return;
    note_drift(drift, c.id);
    if (!a.error)
      a.error = reports::AttemptError{
          drift.front().host, "settings",
          fmt::format("{} at the end of the attempt: it did not run under the run's settings "
                      "(changed under the run)",
                      drift_text(drift))};
    events_.settings_changed_under_run(drift);
  }

  // run.json keeps each setting changed under the run once, with where it was first seen.
  void note_drift(const std::vector<SettingDrift>& drift, const std::string& seen_after) {
    nlohmann::json& list = record_.fabric_settings["changed_under_run"];
    if (!list.is_array()) list = nlohmann::json::array();
    for (const SettingDrift& d : drift) {
      const bool known = std::any_of(list.begin(), list.end(), [&d](const nlohmann::json& j) {
        return j.value("host", "") == d.host && j.value("netdev", "") == d.netdev &&
               j.value("name", "") == d.name;
      });
      if (!known)
        list.push_back({{"host", d.host},
                        {"netdev", d.netdev},
                        {"name", d.name},
                        {"set", d.set},
                        {"found", d.found},
                        {"seen_after", seen_after}});
    }
    // Each value in force the run recorded says whether it held: a setting changed under the
    // run was not in force for all of it.
    for (nlohmann::json& v : record_.fabric_settings["in_force"])
      for (const SettingDrift& d : drift)
        if (v.value("host", "") == d.host && v.value("netdev", "") == d.netdev &&
            v.value("name", "") == d.name) {
          v["held"] = false;
          v["found"] = d.found;
        }
    record_.fabric_settings["held"] = false;
  }

  // Everything the run changed, put back and read back; said either way, never thrown (the
  // results are on disk already). Read first: a setting changed under the run since the last
  // attempt is recorded as not held, and `restored` only says the values before the run are back.
  void restore_settings() {
    if (!fabric_settings_) return;
    try {
      const std::vector<SettingDrift> drift = fabric_settings_->changed_under_run();
      if (!drift.empty()) {
        note_drift(drift, "the end of the run");
        events_.settings_changed_under_run(drift);
      }
    } catch (const Error& e) {
      record_.fabric_settings["held_unknown"] = e.what();
    }
    if (!record_.fabric_settings.contains("held")) record_.fabric_settings["held"] = true;
    try {
      const std::vector<SettingsRestored> restored = fabric_settings_->restore();
      record_.fabric_settings["restored"] = true;
      events_.settings_restored(restored);
    } catch (const Error& e) {
      record_.fabric_settings["restore_error"] = e.what();
      settings_error_ = static_cast<int>(ExitCode::infrastructure);
      events_.settings_not_restored(e.what());
    }
    save();
    fabric_settings_.reset();
  }

  void run_cases() {
    std::size_t i = 0;
    while (i < cases_.size() && !interrupt_.load()) {
      const std::size_t test = cases_[i].test;
      std::size_t end = i;
      while (end < cases_.size() && cases_[end].test == test) ++end;
      const suites::SuiteTest& t = suite_.tests[test];
      events_.test_started(t.name, end - i);
      // Only a test with cases to run changes the fabric for them.
      const bool own = !t.fabric_settings.empty() && !skip_reason(t.name);
      const std::string refused = own ? enter_test_settings(t, i, end) : std::string();
      for (std::size_t k = i; k < end && !interrupt_.load(); ++k) {
        events_.case_started(record_.cases[k], k - i);
        if (refused.empty())
          run_case(k);
        else
          settings_refused_case(k, refused);
        events_.case_ended(record_.cases[k], k - i);
      }
      events_.test_ended();
      i = end;
      if (own && !leave_test_settings()) break;
    }
    if (interrupt_.load()) record_.interrupted = true;
  }

  // The settings a test's cases run under: the suite's, the test's over them, and --set's over
  // both (a bisection or a person asked for them for the whole run).
  std::vector<settings::Assignment> wanted_for(const suites::SuiteTest& t) const {
    return settings::merge(settings::merge(suite_.settings, t.fabric_settings), o_.settings);
  }

  // The hosts put back as they were before the run, then the test's settings applied, read back
  // and journaled, as the run's were; recorded in each of its cases. Returns why they could not
  // be (its cases then do not run), or nothing.
  std::string enter_test_settings(const suites::SuiteTest& t, std::size_t begin, std::size_t end) {
    const std::vector<settings::Assignment> wanted = wanted_for(t);
    std::string error;
    try {
      fabric_settings_->restore();
      fabric_settings_->apply(wanted, record_.run_id);
    } catch (const Error& e) {
      error = e.what();
    }
    nlohmann::json applied = settings_json(wanted, *fabric_settings_);
    if (!error.empty()) applied["error"] = error;
    for (std::size_t k = begin; k < end; ++k) record_.cases[k].fabric_settings = applied;
    save();
    if (error.empty())
      events_.settings_applied(fabric_settings_->in_force());
    else
      events_.settings_failed(fmt::format("test '{}': {}", t.name, error));
    return error;
  }

  // Back to the run's settings after a test with its own. When that fails the run stops: what
  // would follow would not run under the settings it records.
  bool leave_test_settings() {
    const std::vector<settings::Assignment> wanted = settings::merge(suite_.settings, o_.settings);
    try {
      fabric_settings_->restore();
      if (!wanted.empty()) fabric_settings_->apply(wanted, record_.run_id);
      return true;
    } catch (const Error& e) {
      if (record_.fabric_settings.is_null()) record_.fabric_settings = nlohmann::json::object();
      record_.fabric_settings["error"] = fmt::format(
          "after a test with its own settings, the run's could not be put back: {}", e.what());
      settings_error_ = static_cast<int>(e.exit_code());
      save();
      events_.settings_failed(e.what());
      return false;
    }
  }

  // A case of a test whose settings could not be applied: one attempt, an error naming them.
  void settings_refused_case(std::size_t k, const std::string& why) {
    reports::CaseRecord& c = record_.cases[k];
    if (!c.skip_reason.empty()) return;
    reports::Attempt a;
    a.error = reports::AttemptError{
        "", "settings", fmt::format("the test's settings could not be applied: {}", why)};
    c.attempts.push_back(std::move(a));
    c.outcome = reports::outcome_of(c);
    save();
  }

  void run_case(std::size_t k) {
    const suites::TestCase& tc = cases_[k];
    const suites::SuiteTest& test = suite_.tests[tc.test];
    reports::CaseRecord& c = record_.cases[k];
    if (!c.skip_reason.empty()) return;
    for (int repeat = 0; repeat < test.settings.repeats && !interrupt_.load(); ++repeat)
      for (int runs = 1;; ++runs) {
        CaseContext context = context_for(tc);
        context.on_progress = [this](double fraction) { events_.case_progress(fraction); };
        context.case_index = k;
        context.attempt_index = c.attempts.size();
        c.attempts.push_back(run_case_attempt(context));
        reports::Attempt& a = c.attempts.back();
        a.repeat = repeat;
        check_settings_held(c, a);
        save();  // what was measured is on disk before it is graded
        // A fabric fault fails the case whatever its thresholds say; they are graded too, so the
        // verdicts show what the traffic measured before its retries ran out.
        if (!a.error || a.error->fault == reports::Fault::fabric) {
          a.grade = suites::grade(test.thresholds, a.metrics, c.names, a.unmeasured, a.where);
          suites::account_for_starvation(*a.grade, test.thresholds, a.cpu_starved);
        }
        c.outcome = reports::outcome_of(c);
        if (keeping_.writes())
          settle_captures(keeping_, inventory_, context.multiplex, c, context.attempt_index, a,
                          o_.timeout);
        save();
        if (a.error || interrupt_.load() || !suites::should_retry(test.thresholds, *a.grade, runs))
          break;
        events_.case_retried(c);
      }
  }

  // The file's problems and, when the inventory loads, those of what could be read of the suite
  // against it, in file order: all at once, not the inventory's only once the file's are fixed.
  [[noreturn]] void throw_suite_problems(const suites::SuiteLoadResult& loaded) const {
    std::optional<inventory::Inventory> inventory;
    try {
      inventory = inventory::load_inventory(o_.inventory_file);
    } catch (const Error&) {
      // Its own problems are told once the suite's are fixed.
    }
    std::string text;
    for (const auto& d : suite_problems(loaded, inventory ? &*inventory : nullptr)) {
      if (!text.empty()) text += '\n';
      text += inventory::to_string(d);
    }
    throw input_error(text);
  }

  std::string history_path() const {
    return o_.history_file.empty() ? (std::filesystem::path(o_.reports_dir) / "history.db").string()
                                   : o_.history_file;
  }

  // The baseline run, when a threshold of a test that runs compares with one: named on the
  // command line or in the suite, read from the history before anything runs (exit 2 when it
  // cannot be), and recorded in run.json.
  void resolve_baseline() {
    const bool from_option = !o_.baseline.empty();
    const std::string asked = from_option ? o_.baseline : suite_.baseline;
    const std::string origin = from_option ? "--baseline" : suite_.file + ": baseline";
    if (asked.empty()) {
      for (const auto& tc : cases_) {
        const suites::SuiteTest& test = suite_.tests[tc.test];
        if (skip_reason(test.name)) continue;
        for (const auto& t : test.thresholds)
          if (suites::uses_baseline(t))
            throw input_error(fmt::format(
                "{}:{}:{}: test '{}': threshold '{}' compares with a baseline run, and none is "
                "named: give --baseline last-qualified (the newest full run of suite '{}' "
                "that exited 0) or --baseline RUN_ID (rocehil history lists them), or 'baseline:' "
                "in "
                "the suite",
                suite_.file, t.line, t.column, test.name, t.text, suite_.name));
      }
      return;
    }
    const std::string path = history_path();
    if (!std::filesystem::exists(path))
      throw input_error(
          fmt::format("{} '{}': there is no run history at {} to read it from "
                      "(--history names another)",
                      origin, asked, path));
    const reports::History history = reports::History::open(path);
    std::string run_id;
    if (asked == suites::last_qualified_baseline) {
      // Full runs only: a bisect step, an --only, --set or selftest run qualified for what it
      // ran, not for the suite, and would leave the cases it did not run without a baseline.
      const auto found = history.last_qualified(suite_.name, reports::RunKinds::full_runs());
      if (!found) {
        // A site whose every run has --set finds none: say which run there is, and the way out.
        std::string newest;
        if (const auto other = history.last_qualified(suite_.name, reports::RunKinds::all()))
          newest = fmt::format(
              "; the newest that qualified, {}, is {} (give --baseline {} to "
              "take it; settings every run wants belong in the suite's "
              "settings:)",
              *other, reports::describe(history.snapshot(*other).row.kind), *other);
        throw input_error(fmt::format(
            "{} '{}': {} holds no full run of suite '{}' that qualified (exit status 0; bisect "
            "steps and --only, --set, selftest runs are not baselines){}; run the suite once on "
            "a fabric you trust, or name a run with --baseline RUN_ID",
            origin, asked, path, suite_.name, newest));
      }
      run_id = *found;
    } else {
      run_id = history.resolve(asked);
    }
    const reports::History::RunSnapshot snapshot = history.snapshot(run_id);
    baseline_samples_ = snapshot.samples;
    record_.baseline = {{"run_id", run_id},
                        {"started_at", snapshot.row.started_at},
                        {"suite", snapshot.row.suite},
                        {"kind", std::string(reports::to_string(snapshot.row.kind.kind))},
                        {"asked", asked},
                        {"origin", origin}};
    events_.baseline_chosen(run_id, asked, origin);
    // A run named by id may be any run (an --only run, a bisect step, the suite before it grew
    // a test): the cases it lacks are said now, before their thresholds grade error.
    std::set<std::string> has;
    for (const auto& c : snapshot.cases) has.insert(c.id);
    std::vector<std::string> missing;
    for (const auto& tc : cases_) {
      const suites::SuiteTest& test = suite_.tests[tc.test];
      if (skip_reason(test.name) || has.contains(tc.id)) continue;
      if (std::any_of(test.thresholds.begin(), test.thresholds.end(),
                      [](const suites::Threshold& t) { return suites::uses_baseline(t); }))
        missing.push_back(tc.id);
    }
    if (!missing.empty()) {
      record_.baseline["missing_cases"] = missing;
      events_.baseline_lacks_cases(run_id, snapshot.row.kind, missing);
    }
  }

  // The run is on disk already; a history that cannot be written is said, and costs nothing else.
  void record_history() {
    const std::string path = history_path();
    try {
      reports::History::open(path).record(record_);
    } catch (const Error& e) {
      events_.history_not_updated(e.what());
    }
  }

  // With the inventory's controller: one agent per host for the whole run, dialed in before any
  // case. A host that did not join stops the run, as a preflight failure does.
  bool start_agents() {
    if (!inventory_.controller) return true;
    agents_ = std::make_unique<RunAgents>(inventory_, hosts_, record_.run_id, events_);
    const std::vector<MissingAgent> missing =
        agents_->start(multiplex_->get(), o_.fanout, interrupt_);
    nlohmann::json& agents = record_.preflight["agents"];
    agents = {{"joined", agents_->dialed().joined_count()}, {"missing", nlohmann::json::array()}};
    for (const MissingAgent& m : missing)
      agents["missing"].push_back({{"host", m.host}, {"why", m.why}});
    save();
    agents_failed_ = !missing.empty();
    return !agents_failed_;
  }

  int finish() {
    std::vector<suites::Outcome> outcomes;
    for (const auto& c : record_.cases) outcomes.push_back(c.outcome);
    int code = suites::run_exit_code(outcomes, record_.interrupted);
    if (preflight_failed_ || agents_failed_) code = static_cast<int>(ExitCode::infrastructure);
    if (settings_stopped_run_)
      code = settings_error_;
    else if (settings_error_ != 0)
      code = std::max(code, settings_error_);
    record_.exit_code = code;
    record_.finished_at = reports::iso_utc(unix_s_now());
    save();
    directory_->write("junit.xml", reports::junit_xml(record_));
    directory_->write("report.html", reports::html_report(reports::to_json(record_)));
    record_history();
    if (o_.drain_tag) {
      // After the results are on disk: a drain that fails loses nothing that was measured.
      const DrainPlan plan = plan_drain(record_, *o_.drain_tag);
      events_.nodes_drained(drain_nodes(plan.drain), plan.not_drained);
    }
    events_.run_ended(record_, directory_->path());
    return code;
  }

  const SuiteRunOptions& o_;
  const std::atomic<bool>& interrupt_;
  RunEvents& events_;
  suites::Suite suite_;
  inventory::Inventory inventory_;
  std::vector<suites::TestCase> cases_;
  std::vector<const inventory::Host*> hosts_;
  std::string self_;
  std::optional<reports::RunDirectory> directory_;
  reports::RunRecord record_;
  std::optional<MultiplexDir> multiplex_;  // from the preflight on; masters stopped with it
  bool preflight_failed_ = false;
  std::unique_ptr<RunAgents> agents_;  // the inventory names a controller: the run's agents
  bool agents_failed_ = false;
  std::unique_ptr<SwitchPolling> switch_polling_;
  CaptureKeeping keeping_;  // the suite's capture.keep, or --keep-captures
  std::unique_ptr<FabricSettings> fabric_settings_;
  std::unique_ptr<FabricEvents> fabric_events_;  // the tests' events act through it
  std::set<std::string> hosts_with_journals_;
  // The baseline run's samples: case id -> metric -> each repeat's value.
  std::map<std::string, std::map<std::string, std::vector<double>>>
      baseline_samples_;               // the preflight found a settings journal there
  int settings_error_ = 0;             // the exit status a settings failure gives the run
  bool settings_stopped_run_ = false;  // they could not be set: no case ran
};

}  // namespace

int run_suite(const SuiteRunOptions& options, const std::atomic<bool>& interrupt, RunEvents& events,
              std::string* run_id) {
  Run run(options, interrupt, events);
  const int code = run.go();
  if (run_id != nullptr) *run_id = run.run_id();
  return code;
}

}  // namespace rocehil::run
