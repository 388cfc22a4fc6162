#pragma once

#include <string>

#include "rocehil/reports/history.hpp"

namespace rocehil::reports {

// A recorded run as OpenMetrics text for a nightly dashboard, in the subset that Prometheus'
// own text format reads too, so node_exporter's textfile collector takes the file as it is:
// gauges only, no timestamps, ending "# EOF".
//   rocehil_run_exit_code, rocehil_run_start_time_seconds, rocehil_run_cases{outcome}
//   rocehil_case_outcome{case, test, outcome} 1
//   rocehil_case_repeats{case, test}
//   rocehil_<metric>{case, test}: the median of the case's repeats. A metric named like
//   pfc_pause_fraction[3] is the family rocehil_pfc_pause_fraction with priority="3".
// Every sample carries suite="..."; label values are escaped, names made of [a-zA-Z0-9_].
std::string to_openmetrics(const History::RunSnapshot& run);

}  // namespace rocehil::reports
