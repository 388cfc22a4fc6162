#pragma once

// One run of one test case, every phase of it: captures start on their hosts, agents start on
// the traffic hosts, the workload runs (an injection beside it when the test has one), the
// captures stop and are analysed. What it measured, or where and why it could not, comes back
// as a reports::Attempt; nothing here throws for a host's failure.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/reports/run_record.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::remote {
class DialedAgents;
}

namespace rocehil::run {

class SwitchPolling;
class FabricActions;
struct CaptureKeeping;

struct CaseContext {
  const inventory::Inventory* inventory = nullptr;
  const suites::Suite* suite = nullptr;
  const suites::SuiteTest* test = nullptr;
  const suites::TestCase* test_case = nullptr;
  const remote::SshMultiplex* multiplex = nullptr;
  // The run's agents, when they dialed home (the inventory names a controller): each case opens
  // sessions on them instead of starting processes. Null: agents are started per case.
  remote::DialedAgents* dialed = nullptr;
  std::string self;                  // this binary, for switch namespaces
  std::chrono::seconds timeout{30};  // each phase's replies; silence during traffic
  std::size_t fanout = 32;           // ssh sessions opening at once
  const std::atomic<bool>* interrupt = nullptr;
  std::function<void(double fraction)> on_progress;  // the workload's progress, 0..1
  // The run's SNMP sessions to its switches; null when no switch has snmp settings.
  SwitchPolling* switch_polling = nullptr;
  // Where captures write their pcapng files on their hosts, when the run keeps them (null or
  // never: analysed only); the case's and the attempt's numbers name the files.
  const CaptureKeeping* keeping = nullptr;
  std::size_t case_index = 0;
  std::size_t attempt_index = 0;
  // Called by the workload once its agents are launched and before any is asked to send: the
  // switches' counters before the case, read meanwhile, are waited for here. May be called more
  // than once (a calibration's runs); unset outside a case attempt.
  std::function<void()> before_first_packet = {};
  // Called with the traffic's agreed wall-clock start (Unix ns) once the workload has chosen it
  // (a collective: its measured run's; perftest: when its client is started).
  std::function<void(std::int64_t at_ns)> on_traffic_start = {};
  // One part of a case with parts (parts.hpp): its start, proposed by the workload, becomes the
  // time every part agreed on plus the part's start_after_s; a collective's ranks start
  // stagger_ns apart from it. Unset outside parts.
  std::function<std::int64_t(std::int64_t proposed_ns)> agree_start = {};
  std::int64_t stagger_ns = 0;
  // What the test's link, NIC and command events act through (the run's FabricEvents); null:
  // such an event fails the case when its time comes.
  FabricActions* fabric_actions = nullptr;
};

// The hosts the case's traffic runs on (its ranks' hosts; bw and lat: the first two) and the
// names its thresholds may use (n, hosts, qps, size, link_gbps). Throws like select_hosts.
struct CaseShape {
  std::vector<std::string> hosts;
  suites::Values names;
};
CaseShape case_shape(const CaseContext& context);

reports::Attempt run_case_attempt(const CaseContext& context);

// The host an error message names: "agent on h3: ..." gives "h3" ("h3/nic1" gives "h3").
std::string host_named_in(const std::string& message);

}  // namespace rocehil::run
