// The file `--out_json --out_json_file=F` writes (perftest_parameters.c: write_test_info_to_file,
// write_bw_report_to_file, write_report_lat_to_file, write_report_lat_duration_to_file).
//
// Two dialects exist, and neither is reliably JSON:
// - up to v4.5-0.x (Debian 12's 4.5+0.17, "Version: 6.06"): bare keys and bare values, every
//   member ending in ",\n", objects closed by "},\n", a key with a space before its colon
//   ("TX_depth : 128"), keys with dots ("percentile_99.9") or spaces ("Test with events"), and
//   duration latency's `--output=latency` line "t_avg: %lf\n" with no comma at all;
// - from 24.01 (commit f9e82f7 "Make output JSON standard"): quoted keys and strings, no trailing
//   commas, but REPORT_FMT_QOS_JSON still writes a bare `sl: %d` key.
// So this reader takes members separated by commas or line ends, keys and values quoted or bare.
//
// Units: the file carries none. BW_peak and BW_average are the very numbers the table prints,
// in --report_gbits' Gb/sec or else MiB/s (format_factor in print_report_bw). The same function
// computes bw_avg = size * iterations / (time * format_factor) and
// MsgRate = iterations / (time * 1e6), so BW_average / (MsgSize * MsgRate) is 8e-3 for Gb/sec and
// 1e6 / 2^20 for MiB/s: the unit is whichever the numbers agree with. A file whose MsgRate or size
// is zero cannot tell, and is read as Gb/sec, since rocehil always passes --report_gbits.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocehil/perftest/report.hpp"
#include "text.hpp"

namespace rocehil::perftest {

namespace {

constexpr int max_depth = 16;  // perftest nests two levels; anything deeper is not its file

struct Member;

struct Node {
  bool is_object = false;
  std::string scalar;           // quotes removed
  std::vector<Member> members;  // in file order; first match wins (vector allows incomplete types)

  const Node* member(std::string_view key) const;
};

struct Member {
  std::string key;
  Node value;
};

const Node* Node::member(std::string_view key) const {
  for (const Member& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

std::string printable(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 60))
    out +=
        (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) ? c : '?';
  return s.size() > 60 ? out + "..." : out;
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::optional<Node> document() {
    skip_space();
    if (!eat('{')) return fail("the file does not start with '{'");
    auto root = object(1);
    if (!root) return std::nullopt;
    skip_space_and_commas();
    if (pos_ < text_.size()) return fail("text after the closing '}'");
    return root;
  }

  const std::string& error() const { return error_; }

 private:
  std::optional<Node> fail(std::string why) {
    if (error_.empty()) error_ = std::move(why) + " (at line " + std::to_string(line()) + ")";
    return std::nullopt;
  }

  int line() const {
    int n = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) n += text_[i] == '\n' ? 1 : 0;
    return n;
  }

  bool eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  void skip_blank() {
    while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
  }
  void skip_space_and_commas() {
    while (pos_ < text_.size() && (is_space(text_[pos_]) || text_[pos_] == ',')) ++pos_;
  }

  // After the opening '{'.
  std::optional<Node> object(int depth) {
    if (depth > max_depth) return fail("objects nested too deep");
    Node node;
    node.is_object = true;
    for (;;) {
      skip_space_and_commas();
      if (pos_ >= text_.size()) return fail("the file ends inside an object (truncated?)");
      if (eat('}')) return node;
      auto key = this->key();
      if (!key) return std::nullopt;
      skip_blank();
      if (!eat(':')) return fail("no ':' after the key '" + printable(*key) + "'");
      skip_blank();
      auto value = this->value(depth);
      if (!value) return std::nullopt;
      node.members.push_back(Member{.key = std::move(*key), .value = std::move(*value)});
    }
  }

  std::optional<std::string> quoted_string() {  // after the opening '"'
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (!eat('"')) {
      fail("a quoted string is not closed");
      return std::nullopt;
    }
    return out;
  }

  std::optional<std::string> key() {
    if (eat('"')) return quoted_string();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ':' && text_[pos_] != '\n' && text_[pos_] != '{' &&
           text_[pos_] != '}' && text_[pos_] != ',')
      ++pos_;
    const std::string_view k = trim(text_.substr(start, pos_ - start));
    if (k.empty()) {
      fail("a member with no key");
      return std::nullopt;
    }
    return std::string(k);
  }

  std::optional<Node> value(int depth) {
    if (eat('{')) return object(depth + 1);
    Node node;
    if (eat('"')) {
      auto s = quoted_string();
      if (!s) return std::nullopt;
      node.scalar = std::move(*s);
      return node;
    }
    if (pos_ < text_.size() && text_[pos_] == '[') return fail("arrays are not in perftest's file");
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '}')
      ++pos_;
    node.scalar = std::string(trim(text_.substr(start, pos_ - start)));
    return node;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
};

// ---- reading the numbers ---------------------------------------------------------------------

struct Fields {
  const Node& node;
  std::string error;

  const std::string* text(std::string_view key) const {
    const Node* n = node.member(key);
    return n && !n->is_object ? &n->scalar : nullptr;
  }

  std::optional<std::uint64_t> count(std::string_view key) {
    const std::string* s = text(key);
    if (!s) return missing(key);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    if (ec != std::errc{} || end != s->data() + s->size()) return bad(key, *s);
    return v;
  }

  // perftest never writes a negative measurement; "-nan" or "inf" is a broken run.
  std::optional<double> measure(std::string_view key) {
    const std::string* s = text(key);
    if (!s) return missing(key);
    double v = 0;
    const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
    if (ec != std::errc{} || end != s->data() + s->size() || !std::isfinite(v) || v < 0)
      return bad(key, *s);
    return v;
  }

  std::nullopt_t missing(std::string_view key) {
    if (error.empty()) error = "results have no '" + std::string(key) + "'";
    return std::nullopt;
  }
  std::nullopt_t bad(std::string_view key, std::string_view v) {
    if (error.empty())
      error = "results '" + std::string(key) + "' is not a finite non-negative number: '" +
              printable(v) + "'";
    return std::nullopt;
  }
};

// See the file comment: the unit BW_average agrees with, given MsgSize and MsgRate.
bool reported_in_mebibytes(double size, double average, double msg_rate_mpps) {
  if (size <= 0 || average <= 0 || msg_rate_mpps <= 0) return false;
  const double as_gbps = size * msg_rate_mpps * 8.0 / 1e3;
  const double as_mib = size * msg_rate_mpps * 1e6 / 1048576.0;
  return std::fabs(std::log(average / as_mib)) < std::fabs(std::log(average / as_gbps));
}

std::optional<BwRow> bandwidth(Fields& f) {
  const auto bytes = f.count("MsgSize");
  const auto iterations = f.count("n_iterations");
  const auto peak = f.measure("BW_peak");
  const auto average = f.measure("BW_average");
  const auto rate = f.measure("MsgRate");
  if (!bytes || !iterations || !peak || !average || !rate) return std::nullopt;
  const double scale = reported_in_mebibytes(static_cast<double>(*bytes), *average, *rate)
                           ? 1048576.0 * 8.0 / 1e9
                           : 1.0;
  return BwRow{.bytes = *bytes,
               .iterations = *iterations,
               .peak_gbps = *peak > 0 ? std::optional<double>(*peak * scale) : std::nullopt,
               .average_gbps = *average * scale,
               .msg_rate_mpps = *rate};
}

std::optional<LatRow> latency(Fields& f) {
  LatRow lat;
  const auto bytes = f.count("MsgSize");
  const auto iterations = f.count("n_iterations");
  if (!bytes || !iterations) return std::nullopt;
  lat.bytes = *bytes;
  lat.iterations = *iterations;
  if (f.text("t_typical")) {
    lat.min_us = f.measure("t_min");
    lat.max_us = f.measure("t_max");
    lat.typical_us = f.measure("t_typical");
    lat.avg_us = f.measure("t_avg");
    lat.stdev_us = f.measure("t_stdev");
    lat.p99_us = f.measure("percentile_99");
    lat.p999_us = f.measure("percentile_99.9");
  } else {
    lat.avg_us = f.measure("t_avg");
    lat.tps = f.measure("tps_average");
  }
  if (!f.error.empty()) return std::nullopt;
  return lat;
}

void read_test_info(const Node& info, Report& r) {
  const auto text = [&](std::string_view key) -> std::string {
    const Node* n = info.member(key);
    return n && !n->is_object ? n->scalar : std::string();
  };
  const auto number = [&](std::string_view key) -> std::optional<std::uint32_t> {
    const std::string s = text(key);
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
  };
  r.test = text("test");
  r.device = text("Device");
  r.connection = text("Connection_type");
  r.link_type = text("Link_type");
  r.qps = number("Number_of_qps");
  r.mtu = number("Mtu");
}

ParseResult failure(std::string why) {
  return ParseResult{.report = std::nullopt,
                     .error = "perftest --out_json file: " + std::move(why)};
}

}  // namespace

ParseResult parse_json(std::string_view out_json_text) {
  if (trim(out_json_text).empty()) return failure("empty file (perftest wrote no report)");
  Reader reader(out_json_text);
  const std::optional<Node> root = reader.document();
  if (!root) return failure(reader.error());

  const Node* results = root->member("results");
  if (!results || !results->is_object) return failure("no 'results' object");

  Report r;
  r.layout = "perftest --out_json file";
  if (const Node* info = root->member("test_info"); info && info->is_object)
    read_test_info(*info, r);

  Fields f{.node = *results, .error = {}};
  if (f.text("BW_average") || f.text("BW_peak") || f.text("MsgRate")) {
    r.bw = bandwidth(f);
  } else if (f.text("MsgSize") && (f.text("t_avg") || f.text("t_typical"))) {
    r.lat = latency(f);
  } else if (f.text("bw_avg") || f.text("msgRate_avg") || f.text("avg_lat") || f.text("t_avg")) {
    return failure("results hold one number only (a run with --output=...): no message size");
  } else {
    return failure("results hold no bandwidth or latency numbers");
  }
  if (!r.bw && !r.lat) return failure(f.error);
  return ParseResult{.report = std::move(r), .error = {}};
}

}  // namespace rocehil::perftest
