#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/reports/run_record.hpp"

namespace rocehil::run {

// One rule for every workload (bw, lat, a collective, an incast): a transport error the fabric
// caused is a failure of the fabric wherever it happens. It used to be an error (exit 3) in a
// collective and only the `errors` metric in a point-to-point case.

// One side of a workload's traffic, as its results tell its transport errors: a rank of a
// collective, the client or the server of a point-to-point case.
struct TrafficSide {
  std::string name;  // "rank 3 (h3)", "client (h1)"
  std::string peer;  // where its first failing QP leads, "rank 4 (h4)"; empty when unknown
  const agent::ResultsEvent* results = nullptr;
};

// The attempt's error when the fabric failed its traffic: a side's first error was a completion
// status the fabric causes (traffic::caused_by_fabric, from its first_error_status), and no
// side's was one that points at a host (a buffer or key it got wrong, a refusal, a flush).
// Such a side keeps the attempt off the fabric, because a QP that fails at one end leaves its
// peer's requests unanswered until the peer's retries run out too. An error that was no
// completion (a wait that timed out, a post refused) or came from an agent older than the
// status tells neither way: the side waiting on a peer whose retries ran out only sees silence.
// Nothing when no side's status is the fabric's. `host` is the one to blame, empty when none.
// The message: "the fabric: QP 0x11: retry_exceeded (rank 3 (h3) -> rank 4 (h4)); 7 transport
// errors on 2 of 4 sides".
std::optional<reports::AttemptError> fabric_fault(const std::vector<TrafficSide>& sides,
                                                  const std::string& host);

}  // namespace rocehil::run
