#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rocehil::reports {

// report.html: one self-contained page (inline CSS and SVG; no script, no font, no image or link
// that leaves the file), made from run.json, so any run directory's report can be made again:
//   - the verdict summary and a row per test case, failures first to the eye;
//   - per test, charts drawn as SVG: busbw against message size per QP count, the collective's
//     iteration times, RoCE bytes per capture point (per spine: ECMP balance), CNP and PFC
//     timelines, per-QP rates and the pairwise matrix with its outliers; then each case's
//     thresholds with measured values and limits;
//   - at the bottom, the preflight snapshot per host (firmware, ECN/DCQCN and PFC settings),
//     the inventory and the suite as they were read.
// Never throws on a run.json with members missing or of the wrong type: what is not there is
// not drawn.
std::string html_report(const nlohmann::json& run);

}  // namespace rocehil::reports
