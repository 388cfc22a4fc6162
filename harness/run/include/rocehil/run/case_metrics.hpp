#pragma once

#include <string_view>
#include <vector>

#include "rocehil/run/collective_run.hpp"
#include "rocehil/run/point_to_point.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::run {

// What a collective case measured, as the metrics thresholds name (docs/suites.md), and the
// names their expressions may use. The orchestrator grades a case with these.

// busbw_gbps, algbw_gbps, time_us, time_p99_us, time_cv, retransmits, timeouts, naks, errors,
// data_errors, cnps (CNPs the QPs handled); data_errors only when the data was checked. A metric
// the ranks' `provider` cannot measure (per-QP counters on verbs) is absent, with the reason.
suites::Measured collective_metrics(const CollectiveCase& c, std::string_view provider);

// n, qps, size, hosts (distinct host names among the ranks) and link_gbps (the slowest of the
// ranks' NICs, 0 when the inventory gives none).
suites::Values collective_names(const CollectiveCase& c, const std::vector<std::string>& hosts,
                                const std::vector<double>& link_gbps);

// A point-to-point case. bw: busbw_gbps and algbw_gbps are the payload rate the receiving side
// counted (the sender's when nothing was received), data_errors the QP directions whose data
// arrived wrong (when checked); lat: lat_p50_us, lat_p99_us, lat_max_us. Both: retransmits,
// timeouts, naks, errors and cnps over both sides' QPs, absent with the reason where `provider`
// does not count them.
suites::Measured point_to_point_metrics(const PointToPointResult& r, std::string_view provider);

}  // namespace rocehil::run
