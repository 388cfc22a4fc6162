// libFuzzer target: any bytes as perftest's stdout, as its --out_json file, and as output to
// search for errors. The parsers must never crash or throw; each result holds a report or an
// error, never both or neither; a report holds exactly one of bw and lat; and no number in it is
// NaN, infinite or negative (perftest prints none such, so one would be a parser bug).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "rocehil/perftest/report.hpp"

namespace pt = rocehil::perftest;

namespace {

constexpr const char* target = "fuzz_perftest_output";

// Stops the run with what went wrong; libFuzzer keeps the input as a crash.
[[noreturn]] void fail(const char* parser, const char* what, std::string_view detail) {
  std::fprintf(stderr, "%s: %s: %s\n%.*s\n", target, parser, what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

bool valid(double v) {
  return std::isfinite(v) && v >= 0;
}
bool valid(const std::optional<double>& v) {
  return !v || valid(*v);
}

void check(const char* parser, const pt::ParseResult& r) {
  if (r.report.has_value() == !r.error.empty())
    fail(parser, "report and error: both or neither", r.error);
  if (!r.report) return;
  const pt::Report& rep = *r.report;
  if (rep.bw.has_value() == rep.lat.has_value())
    fail(parser, "report with both or neither of bw and lat", rep.layout);
  if (rep.layout.empty()) fail(parser, "report without a layout", "");
  if (rep.bw && !(valid(rep.bw->peak_gbps.value_or(0)) && valid(rep.bw->average_gbps) &&
                  valid(rep.bw->msg_rate_mpps)))
    fail(parser, "bandwidth NaN, infinite or negative", rep.layout);
  if (rep.lat) {
    const pt::LatRow& l = *rep.lat;
    if (!(valid(l.min_us) && valid(l.max_us) && valid(l.typical_us) && valid(l.avg_us) &&
          valid(l.stdev_us) && valid(l.p99_us) && valid(l.p999_us) && valid(l.tps)))
      fail(parser, "latency NaN, infinite or negative", rep.layout);
    // Tables before 2016 had no t_avg, duration tables no t_typical: one of them is there.
    if (!l.avg_us && !l.typical_us) fail(parser, "latency row without a latency", rep.layout);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check("parse_text", pt::parse_text(text));
    check("parse_json", pt::parse_json(text));
    const std::string error = pt::find_error(text);
    if (error.size() > 3 * size + 3) fail("find_error", "longer than its input", error);
  } catch (const std::exception& e) {
    fail("parser", "threw", e.what());
  }
  return 0;
}
