#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// One of a sender's QPs that waited for a completion with work outstanding (QpResult's
// stall_us): a flow the fabric stopped while the sender's other QPs kept its total moving.
struct QpStallSeen {
  std::uint32_t qpn = 0;
  std::string peer;  // the host at its other end
  double ms = 0;
  double from_s = 0;  // since the sender's start
};

// One sender's delivered bytes over the case (agent::ResultsEvent::timeline), named for a person:
// "h1 (part roce)", and its QPs' longest waits, where its agent measured them.
struct SenderTimeline {
  std::string sender;
  agent::ProgressTimeline timeline;
  std::vector<QpStallSeen> qp_stalls{};
};

// The QPs' longest waits a bw sender's results carry, each toward `peer`.
std::vector<QpStallSeen> qp_stalls_of(const agent::ResultsEvent& sender, const std::string& peer);

// When a fabric event of the case happened (wall clock), and what it was: "link_down l1-s1".
struct EventTime {
  std::string what;
  std::int64_t at_ns = 0;
};

// The longest time the sender moved nothing, from its first delivered byte to its last sample:
// the stretch between the sample after which its bytes stopped growing and the sample where
// they grew again (or its last). Known to a sampling period. Nothing before its first byte.
struct Stall {
  double ms = 0;
  double from_s = 0;  // since the sender's start
};
std::optional<Stall> longest_stall(const agent::ProgressTimeline& t);

// How soon after an event the sender was back to `share` of its rate before it: its rate over
// the second before the event (from its first byte, if later; at least 100 ms of it) against
// its rate over each 100 ms window after; the recovery is when the first window at `share` or
// more begins, 0 when the flow never dipped. A flow that never got back counts the time to its
// end (`never`: at least that). Nothing when the sender did not run across the event or moved
// nothing before it; `why` says so, or that it never got back.
// `shortfall_bytes`: what the sender would have delivered from the event to its recovery at its
// rate before, less what it delivered (the traffic the event cost it; 0 when it never dipped).
struct Recovery {
  std::optional<double> ms;
  bool never = false;
  double rate_before_gbps = 0;
  double shortfall_bytes = 0;
  std::string why;
};
Recovery recovery_after(const agent::ProgressTimeline& t, std::int64_t event_ns,
                        double share = 0.9);

// max_stall_ms (the longest time any flow moved nothing: a sender's total bytes, or one of its
// QPs' completions, over senders) and recovery_ms (the longest over events and the
// senders that ran across them), each with where it happened; the per-sender numbers and the
// rate per 10 ms in `raw`, for the report.
suites::Measured timeline_metrics(const std::vector<SenderTimeline>& senders,
                                  const std::vector<EventTime>& events, nlohmann::json& raw);

}  // namespace rocehil::run
