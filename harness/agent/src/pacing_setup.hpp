#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {

// How a paced bw sender holds `setup.rate_bps` over its connected QPs: on verbs, the NIC's
// limiter on every QP at rate / qps (a QP that refuses lifts the limits already set, and the
// engine paces instead, with the NIC's reason kept); on soft, the engine's token bucket, which
// sits where the posting happens and so holds the sender's total over all its QPs whatever the
// soft port pacer does (that one paces the port, ACKs and READ responses too, and is DCQCN's line
// rate). Nothing when the setup sends nothing paced.
std::optional<PacingReport> pace_sender(const SetupRequest& setup,
                                        std::vector<std::unique_ptr<traffic::QueuePair>>& qps);

// The rate the engine's token bucket holds for `pacing` (0: none, the NIC paces or nothing does).
double engine_rate_bps(const std::optional<PacingReport>& pacing);

}  // namespace rocehil::agent
