#include "capture/capture_text.hpp"

#include <fmt/format.h>

#include "capture/analysis_text.hpp"
#include "rocehil/common/units.hpp"

namespace rocehil::cli {

namespace {

double duration_s(const capture::CaptureSummary& s) {
  return s.end_ns > s.start_ns ? static_cast<double>(s.end_ns - s.start_ns) / 1e9 : 0.0;
}

}  // namespace

namespace {

nlohmann::json counters_json(const capture::CaptureCounters& c) {
  return {{"frames", c.captured},
          {"dropped_buffer", c.dropped_buffer},
          {"dropped_interface", c.dropped_interface},
          {"dropped", c.dropped()},
          {"coverage", c.coverage()},
          {"moved", c.moved}};
}

}  // namespace

nlohmann::json capture_json(const capture::CaptureSummary& s, const CaptureSetup& setup) {
  const capture::CaptureCounters& c = s.counters;
  nlohmann::json workers = nlohmann::json::array();
  for (const capture::CaptureCounters& w : s.workers) workers.push_back(counters_json(w));
  return {
      {"backend", setup.backend},
      {"iface", s.iface.name},
      {"description", s.iface.description},
      {"filter", setup.filter},
      {"bpf", s.iface.bpf_filter},
      {"snaplen", setup.snaplen},
      {"speed_bps", s.iface.speed_bps},
      {"start_ns", s.start_ns},
      {"end_ns", s.end_ns},
      {"duration_s", duration_s(s)},
      {"frames", c.captured},
      {"dropped_buffer", c.dropped_buffer},
      {"dropped_interface", c.dropped_interface},
      {"dropped", c.dropped()},
      {"lost_upstream", c.lost_upstream},
      {"coverage", c.coverage()},
      {"moved", c.moved},
      {"workers", workers},
      {"files", s.files},
      {"files_deleted", s.files_deleted},
      {"write_error", s.write_error.empty() ? nlohmann::json() : nlohmann::json(s.write_error)}};
}

std::string render_capture_text(const capture::CaptureSummary& s, const CaptureSetup& setup,
                                std::size_t top) {
  const capture::CaptureCounters& c = s.counters;
  std::string out = fmt::format("capture   {} frames in {} on {} ({}, filter {}, snap length {})\n",
                                group_digits(c.captured),
                                format_duration_ns(static_cast<double>(s.end_ns - s.start_ns)),
                                s.iface.name, setup.backend, setup.filter, setup.snaplen);
  // Loss first and always, in the same words whether or not there was any.
  out += fmt::format(
      "coverage  {:.4f}%: dropped {} in the capture buffer, {} at the interface{}{}\n",
      100.0 * c.coverage(), group_digits(c.dropped_buffer), group_digits(c.dropped_interface),
      c.lost_upstream > 0
          ? fmt::format(", {} lost on the way from the switch", group_digits(c.lost_upstream))
          : std::string(),
      c.dropped() + c.lost_upstream > 0 ? " - the analysis below misses these frames" : "");
  if (s.workers.size() > 1) {
    for (std::size_t w = 0; w < s.workers.size(); ++w) {
      const capture::CaptureCounters& wc = s.workers[w];
      out += fmt::format("  worker {}  {} frames, coverage {:.4f}%, dropped {} + {}\n", w + 1,
                         group_digits(wc.captured), 100.0 * wc.coverage(),
                         group_digits(wc.dropped_buffer), group_digits(wc.dropped_interface));
    }
  }
  if (c.moved > 0)
    out += fmt::format(
        "moved     {} frames went to another worker's queue, their own being nearly full: their "
        "flows' PSN gaps may be false\n",
        group_digits(c.moved));
  if (!s.files.empty()) {
    out += fmt::format("written   {}", s.files.front());
    if (s.files.size() > 1)
      out += fmt::format(" ... {} ({} files)", s.files.back(), s.files.size());
    if (s.files_deleted > 0) out += fmt::format(", {} older ring files deleted", s.files_deleted);
    out += "\n";
  }
  if (!s.write_error.empty()) out += fmt::format("WRITE FAILED  {}\n", s.write_error);
  out += "\n";
  CaptureInfo info{s.files.empty() ? s.iface.name : s.files.back(),
                   "live " + setup.backend,
                   {},
                   "the interface's own speed, or --link-gbps"};
  out += render_analysis_text(s.analysis, info, top);
  return out;
}

}  // namespace rocehil::cli
