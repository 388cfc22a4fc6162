#pragma once

#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// What the capture points running beside a test case saw, as thresholds name it. Each summary
// is one capture point's (its analysis JSON inside). Pure.
//   mirror_cnps, ecn_marked, pfc_frames, pfc_storms (PFC and 802.3x): summed over the points;
//   pfc_pause_fraction[p]: the largest of the points' (a pause on any mirrored link counts);
//   capture_coverage: the lowest point's frames / (frames + drops);
//   ecmp_imbalance: with two or more points, each mirroring one of a set of parallel links (one
//     per spine), the most RoCEv2 bytes any point saw over the mean; with one point it is not
//     measured, and a threshold on it is an error that says so.
// A metric the points could not see is absent with the reason: everything without a capture,
// ecn_marked and ecmp_imbalance behind filter cnp-pfc (it keeps no data frames).
// Throws rocehil::Error (infrastructure) when a summary's analysis is not the analysis schema.
suites::Measured capture_metrics(const std::vector<agent::CaptureSummaryEvent>& summaries);

}  // namespace rocehil::run
