#pragma once

// A test's events (suites::Event, its `inject:` among them) run beside the traffic, each at its
// at_s after the traffic's agreed start (CaseContext::on_traffic_start): the link, NIC and
// command events one after another on one thread, through the run's FabricActions; each pfc event
// on its own thread, as `rocehil inject` (it lasts its duration_s). What each did and when it
// really happened is kept for run.json; an event that failed, or never happened, fails the case.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cases/case_attempt.hpp"
#include "rocehil/remote/run_command.hpp"
#include "rocehil/run/fabric_actions.hpp"
#include "rocehil/run/suite_check.hpp"

namespace rocehil::run::case_traffic {

class EventsRun {
 public:
  // Every pfc event's command made now: a bad one throws as injection_command does, before any
  // traffic. A link, NIC or command event with no `c.fabric_actions` fails when its time comes.
  explicit EventsRun(const CaseContext& c);
  ~EventsRun();
  EventsRun(const EventsRun&) = delete;
  EventsRun& operator=(const EventsRun&) = delete;

  // The first call counts: a workload that starts twice (a calibration) is timed from the first.
  void traffic_starts_at(std::int64_t at_ns);
  // The traffic is over: an event still waiting for its time never happens.
  void give_up();
  void wait();

  // After wait(): the events as run.json keeps them (raw.fabric_events), with what was brought
  // up at the case's end; the test's `inject:` as raw.inject always was (null when none); the
  // first event that failed or never happened.
  nlohmann::json json() const;
  nlohmann::json inject_json() const;
  std::optional<reports::AttemptError> failure(bool interrupted) const;

  // What the events took down and did not bring up, brought up (after wait()).
  void bring_up_left();

 private:
  struct Record {
    const suites::Event* event = nullptr;
    std::optional<InjectionCommand> injection;  // pfc
    bool ran = false;
    std::int64_t started_ns = 0, ended_ns = 0;
    std::string did, error;
    remote::CommandResult result;  // pfc
  };
  // Sleeps until the event's time; false when the traffic never started, ended or was stopped.
  bool wait_for(const suites::Event& e);
  void run_one(Record& r);

  const CaseContext& context_;
  std::vector<Record> records_;
  std::vector<BroughtUp> brought_up_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::int64_t> traffic_start_ns_;
  bool gave_up_ = false;
  std::vector<std::thread> threads_;  // last: they start once everything they use is there
};

}  // namespace rocehil::run::case_traffic
