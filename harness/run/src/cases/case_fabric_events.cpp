#include "cases/case_fabric_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "cases/case_traffic.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run::case_traffic {

namespace {

using A = suites::EventAction;

// What an event acts on, as run.json and messages name it.
std::string target_of(const suites::Event& e) {
  switch (e.action) {
    case A::link_down:
    case A::link_up: return "link " + e.link;
    case A::nic_down:
    case A::nic_up: return "host " + e.host;
    case A::pfc: return fmt::format("{} on link {}", e.pfc.from, e.pfc.link);
    case A::command:
      return fmt::format("{} {}", e.host.empty() ? "switch" : "host",
                         e.host.empty() ? e.switch_name : e.host);
  }
  return {};
}

// The host (or switch) a failed event's error names.
std::string blamed(const suites::Event& e) {
  if (e.action == A::pfc) return e.pfc.from;
  return e.host.empty() ? e.switch_name : e.host;
}

}  // namespace

EventsRun::EventsRun(const CaseContext& c) : context_(c) {
  for (const suites::Event& e : c.test->events) {
    Record r;
    r.event = &e;
    if (e.action == A::pfc)
      r.injection = in_phase("inject", e.pfc.from, [&] {
        return injection_command(e.pfc, *c.inventory, c.suite->file, c.self, c.multiplex);
      });
    records_.push_back(std::move(r));
  }
  // A pfc event lasts its duration: each has its own thread. The others run in order on one,
  // so a link's up never overtakes its down.
  std::vector<Record*> in_order;
  for (Record& r : records_)
    if (r.injection)
      threads_.emplace_back([this, &r] { run_one(r); });
    else
      in_order.push_back(&r);
  if (!in_order.empty())
    threads_.emplace_back([this, in_order] {
      for (Record* r : in_order) run_one(*r);
    });
}

EventsRun::~EventsRun() {
  give_up();
  wait();
}

void EventsRun::traffic_starts_at(std::int64_t at_ns) {
  const std::lock_guard lock(mutex_);
  if (!traffic_start_ns_) traffic_start_ns_ = at_ns;
  changed_.notify_all();
}

void EventsRun::give_up() {
  const std::lock_guard lock(mutex_);
  gave_up_ = true;
  changed_.notify_all();
}

void EventsRun::wait() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

bool EventsRun::wait_for(const suites::Event& e) {
  std::unique_lock lock(mutex_);
  const auto stopped = [&] { return gave_up_ || context_.interrupt->load(); };
  while (!traffic_start_ns_ && !stopped()) changed_.wait_for(lock, std::chrono::milliseconds(20));
  if (!traffic_start_ns_ || stopped()) return false;
  const std::int64_t at_ns = *traffic_start_ns_ + static_cast<std::int64_t>(e.at_s * 1e9);
  // The start is a wall-clock time the agents agreed on: slept to on the wall clock.
  for (std::int64_t left; (left = at_ns - wall_clock_ns()) > 0;) {
    changed_.wait_for(lock, std::chrono::nanoseconds(std::min<std::int64_t>(left, 20'000'000)));
    if (stopped()) return false;
  }
  return true;
}

void EventsRun::run_one(Record& r) {
  const suites::Event& e = *r.event;
  if (!wait_for(e)) return;
  r.ran = true;
  r.started_ns = wall_clock_ns();
  try {
    if (r.injection) {
      const auto limit =
          std::chrono::milliseconds(30000 + static_cast<long>(e.pfc.duration_s * 1000));
      r.result = remote::run_command(r.injection->command.argv, {.timeout = limit});
      r.did = remote::remote_command_line(r.injection->command.argv);
      if (!r.result.succeeded())
        r.error = fmt::format("'rocehil inject' on {} ({}) failed: {}", r.injection->from,
                              r.injection->iface, r.result.reason());
    } else if (context_.fabric_actions == nullptr) {
      r.error = "this run has no means to act on the fabric (only 'rocehil run' has)";
    } else {
      FabricActions& act = *context_.fabric_actions;
      switch (e.action) {
        case A::link_down:
        case A::link_up: r.did = act.link(e.link, e.action == A::link_up); break;
        case A::nic_down:
        case A::nic_up: r.did = act.nic(e.host, e.action == A::nic_up); break;
        case A::command: r.did = act.command(e); break;
        case A::pfc: break;
      }
    }
  } catch (const std::exception& err) {
    r.error = err.what();
  }
  r.ended_ns = wall_clock_ns();
}

void EventsRun::bring_up_left() {
  if (context_.fabric_actions != nullptr) brought_up_ = context_.fabric_actions->bring_up_all();
}

nlohmann::json EventsRun::json() const {
  nlohmann::json events = nlohmann::json::array();
  for (const Record& r : records_) {
    const suites::Event& e = *r.event;
    nlohmann::json j{{"action", suites::to_string(e.action)},
                     {"target", target_of(e)},
                     {"at_s", e.at_s},
                     {"from_inject", e.from_inject},
                     {"happened", r.ran}};
    if (r.ran) {
      j["started_ns"] = r.started_ns;
      j["ended_ns"] = r.ended_ns;
      // The offset from the agreed start it really happened at, beside the one asked for.
      j["offset_s"] = static_cast<double>(r.started_ns - *traffic_start_ns_) / 1e9;
      j["ok"] = r.error.empty();
      j["did"] = r.did;
      if (!r.error.empty()) j["error"] = r.error;
    }
    if (r.injection && r.ran) {
      j["exit_code"] = r.result.exit_code;
      j["output"] = r.result.out;
    }
    events.push_back(std::move(j));
  }
  nlohmann::json up = nlohmann::json::array();
  for (const BroughtUp& b : brought_up_) {
    nlohmann::json j{{"what", b.what}, {"did", b.did}, {"ok", b.error.empty()}};
    if (!b.error.empty()) j["error"] = b.error;
    up.push_back(std::move(j));
  }
  return {{"traffic_start_ns", traffic_start_ns_ ? nlohmann::json(*traffic_start_ns_) : nullptr},
          {"events", std::move(events)},
          {"brought_up_at_end", std::move(up)}};
}

nlohmann::json EventsRun::inject_json() const {
  for (const Record& r : records_) {
    if (!r.event->from_inject || !r.injection) continue;
    return {{"from", r.injection->from},
            {"iface", r.injection->iface},
            {"traffic_start_ns", traffic_start_ns_ ? nlohmann::json(*traffic_start_ns_) : nullptr},
            {"started_ns", r.ran ? nlohmann::json(r.started_ns) : nullptr},
            {"exit_code", r.result.exit_code},
            {"output", r.result.out}};
  }
  return nullptr;
}

std::optional<reports::AttemptError> EventsRun::failure(bool interrupted) const {
  if (interrupted) return std::nullopt;
  for (const Record& r : records_) {
    const suites::Event& e = *r.event;
    const std::string what =
        fmt::format("event {} of {} at {} s", suites::to_string(e.action), target_of(e), e.at_s);
    const std::string phase = e.from_inject ? "inject" : "event";
    if (!r.ran)
      return reports::AttemptError{
          blamed(e), phase,
          traffic_start_ns_
              ? fmt::format("{} never happened: the traffic ended before it", what)
              : fmt::format("{} never happened: the workload never told when its traffic "
                            "started",
                            what)};
    if (!r.error.empty())
      return reports::AttemptError{
          blamed(e), phase,
          fmt::format("{} failed {:.3f} s after the traffic started: {}", what,
                      static_cast<double>(r.started_ns - *traffic_start_ns_) / 1e9, r.error)};
  }
  for (const BroughtUp& b : brought_up_)
    if (!b.error.empty())
      return reports::AttemptError{
          "", "event",
          fmt::format("{} could not be brought up at the case's end: {}", b.what, b.error)};
  return std::nullopt;
}

}  // namespace rocehil::run::case_traffic
