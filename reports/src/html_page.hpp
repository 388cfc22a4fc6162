#pragma once

// Private to the reports library: what report.html and trend.html share. The style goes inline
// in each page (a page that fetches nothing).
#include <string>
#include <string_view>

#include "rocehil/reports/junit.hpp"

namespace rocehil::reports {

inline std::string esc(std::string_view s) {
  return xml_escape(s);
}

inline constexpr const char* page_style = R"css(
body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;color:#1f2328;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #d0d7de;
padding-bottom:.2em;margin-top:1.8em}h3{font-size:1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.9em}
th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{color:#fff;border-radius:.8em;padding:.1em .6em;font-size:.85em;white-space:nowrap}
.meta td:first-child{color:#57606a}.charts{display:flex;flex-wrap:wrap;gap:1em}
.charts figure{margin:0}.charts figcaption{font-size:.85em;color:#57606a}
pre{background:#f6f8fa;padding:.8em;overflow-x:auto;font-size:.85em}
.error{color:#8250df}.fail{color:#cf222e;font-weight:bold}.warn{color:#9a6700}
)css";

}  // namespace rocehil::reports
