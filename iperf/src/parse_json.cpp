// iperf3's --json document (iperf_api.c, 3.12: iperf_json_start, iperf_print_results) read into
// a Report. Members are taken where they are and of the type iperf3 writes; a missing sum stays
// absent rather than 0.
#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "rocehil/iperf/report.hpp"

namespace rocehil::iperf {

namespace {

using json = nlohmann::json;

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<double> number(const json& object, const char* key) {
  const json* v = member(object, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

// iperf3 writes counts as integers (cJSON numbers); a negative or fractional one is not a count.
std::optional<std::uint64_t> count(const json& object, const char* key) {
  const json* v = member(object, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) return v->get<std::uint64_t>();
  if (v->is_number_integer() && v->get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v->get<std::int64_t>());
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (d >= 0 && d < 1.8e19 && d == static_cast<double>(static_cast<std::uint64_t>(d)))
      return static_cast<std::uint64_t>(d);
  }
  return std::nullopt;
}

std::string text(const json& object, const char* key) {
  const json* v = member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<Sum> sum(const json& end, const char* key) {
  const json* s = member(end, key);
  if (s == nullptr || !s->is_object()) return std::nullopt;
  const auto bytes = count(*s, "bytes");
  const auto bps = number(*s, "bits_per_second");
  if (!bytes || !bps) return std::nullopt;
  Sum out;
  out.seconds = number(*s, "seconds").value_or(0);
  out.bytes = *bytes;
  out.bits_per_second = *bps;
  out.retransmits = count(*s, "retransmits");
  out.packets = count(*s, "packets");
  out.lost_packets = count(*s, "lost_packets");
  out.jitter_ms = number(*s, "jitter_ms");
  return out;
}

}  // namespace

ParseResult parse_json(std::string_view json_text) {
  ParseResult r;
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end());
  } catch (const std::exception& e) {
    r.error = fmt::format("not JSON: {}", e.what());
    return r;
  } catch (...) {
    r.error = "not JSON";
    return r;
  }
  const json* start = member(doc, "start");
  if (start == nullptr || !start->is_object()) {
    r.error = "no 'start' object (is this iperf3's --json output?)";
    return r;
  }
  Report report;
  report.version = text(*start, "version");
  report.error = text(doc, "error");
  if (const json* t = member(*start, "test_start"); t != nullptr && t->is_object()) {
    report.protocol = text(*t, "protocol");
    if (const auto n = count(*t, "num_streams");
        n && *n <= std::numeric_limits<std::uint32_t>::max())
      report.streams = static_cast<std::uint32_t>(*n);
    if (const auto tos = count(*t, "tos"); tos && *tos <= 255) report.tos = static_cast<int>(*tos);
    report.duration_s = number(*t, "duration");
    report.target_bitrate = count(*t, "target_bitrate");
  }
  if (const json* end = member(doc, "end"); end != nullptr && end->is_object()) {
    report.sent = sum(*end, "sum_sent");
    report.received = sum(*end, "sum_received");
    // Before 3.10 a UDP test's totals were one "sum" (the receiver's loss, the sender's bytes).
    if (!report.received && report.protocol == "UDP") report.received = sum(*end, "sum");
  }
  r.report = std::move(report);
  return r;
}

}  // namespace rocehil::iperf
