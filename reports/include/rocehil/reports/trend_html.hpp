#pragma once

#include <string>
#include <string_view>

#include "rocehil/reports/trend.hpp"

namespace rocehil::reports {

// trend.html: one self-contained page (inline SVG and style, nothing fetched, no script) with a
// section per case: each metric's values over the runs, its change points marked, every point a
// link to that run's report (`report_prefix` + run id + "/report.html"), and beside each change
// point what changed between the runs on either side. Then every run, linked.
std::string trend_html(const Trend& t, std::string_view report_prefix);

}  // namespace rocehil::reports
