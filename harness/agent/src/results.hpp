#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/traffic/provider.hpp"
#include "rocehil/traffic/workload.hpp"

namespace rocehil::agent {

// Turning what a workload returned into the results event the agent reports.

// Fills a QP's buffer (source half, target half) with patterns that differ by role, QP and
// half, so a transfer that did not happen cannot look intact; GPU memory through the provider.
void fill_buffer(traffic::Provider& provider, const traffic::MemoryRegion& region, Role role,
                 std::uint32_t qp_index);

// Per-QP numbers of a workload, without buffer checksums (those come when the run has ended).
void add_qp_results(ResultsEvent& results, const std::vector<traffic::QpBwResult>& per_qp);
void add_bw(ResultsEvent& results, const traffic::BwResult& bw);
void add_latency(ResultsEvent& results, const traffic::LatResult& lat,
                 std::chrono::steady_clock::duration elapsed);
// The passive side of bw: what it received (SEND, WRITE_WITH_IMM) over the time it served.
void add_served(ResultsEvent& results, const traffic::LiveProgress& progress,
                std::chrono::steady_clock::duration elapsed);
// Per-QP counters and buffer checksums (GPU memory read back through the provider), read once
// nothing else touches the QPs.
void add_qp_state(ResultsEvent& results, const traffic::Provider& provider,
                  const std::vector<std::unique_ptr<traffic::QueuePair>>& qps,
                  const std::vector<traffic::MemoryRegion>& memory, std::uint32_t message_bytes);
// The class each QP was created with, found by its QPN: qps[i] is QP i % setup.qps of its
// connection (a collective's are peer by peer).
void add_qp_classes(ResultsEvent& results,
                    const std::vector<std::unique_ptr<traffic::QueuePair>>& qps,
                    const SetupRequest& setup);

}  // namespace rocehil::agent
