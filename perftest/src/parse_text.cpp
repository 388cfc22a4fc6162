// perftest's stdout: a banner of "Key : value" lines, then a result table whose header names
// the columns ("#bytes #iterations BW peak[Gb/sec] ..."), then one row per message size.
//
// The columns are read by name, not by position: perftest's tables changed over the years
// (latency tables had 3 timing columns before 2016 and 7 after, duration tables gained
// "tps average", QoS tables put "#sl" second, per-port and --cpu_util tables add columns on the
// right, MB/sec became MiB/sec in 2024). Every row field maps to the header label at its index.

#include <algorithm>
#include <array>
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

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF from a Windows log
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <typename Int>
std::optional<Int> to_int(std::string_view s) {
  Int v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// perftest never prints a negative time, rate or bandwidth; "-nan" or "inf" means a broken run,
// and a number like that must not reach a report as if it were a measurement.
std::optional<double> to_measure(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

// A piece of the input quoted in an error: printable and short, whatever the bytes were.
std::string quoted(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 100))
    out +=
        (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) ? c : '?';
  if (s.size() > 100) out += "...";
  return "'" + out + "'";
}

// ---- banner ----------------------------------------------------------------------------------

// The value after "key   :" on a banner line, up to the next blank. perftest pads keys with
// spaces (and one with a tab: "rdma_cm QPs\t : OFF") and puts two fields on some lines
// (" Dual-port       : OFF\t\tDevice         : mlx5_0").
std::optional<std::string_view> banner_value(std::string_view line, std::string_view key) {
  for (std::size_t pos = line.find(key); pos != std::string_view::npos;
       pos = line.find(key, pos + 1)) {
    if (pos > 0 && !is_blank(line[pos - 1])) continue;
    std::size_t i = pos + key.size();
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size() || line[i] != ':') continue;
    ++i;
    while (i < line.size() && is_blank(line[i])) ++i;
    std::size_t end = i;
    while (end < line.size() && !is_blank(line[end])) ++end;
    if (end > i) return line.substr(i, end - i);
  }
  return std::nullopt;
}

// "4096[B]" -> 4096
template <typename Int>
std::optional<Int> leading_int(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  return to_int<Int>(s.substr(0, n));
}

// The title line, "                    RDMA_Write Bidirectional BW Test": no colon, ends in "Test".
bool is_title(std::string_view line) {
  const std::string_view t = trim(line);
  constexpr std::string_view suffix = " Test";
  if (t.size() <= suffix.size() || t.substr(t.size() - suffix.size()) != suffix) return false;
  if (t.find(':') != std::string_view::npos) return false;
  const char first = t.front();
  return (first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z');
}

void read_banner(const std::vector<std::string_view>& lines, std::size_t end, Report& r) {
  for (std::size_t i = 0; i < end; ++i) {
    const std::string_view line = lines[i];
    if (r.test.empty() && is_title(line)) r.test = std::string(trim(line));
    if (r.device.empty())
      if (auto v = banner_value(line, "Device")) r.device = std::string(*v);
    if (r.connection.empty())
      if (auto v = banner_value(line, "Connection type")) r.connection = std::string(*v);
    if (r.link_type.empty())
      if (auto v = banner_value(line, "Link type")) r.link_type = std::string(*v);
    if (!r.qps)
      if (auto v = banner_value(line, "Number of qps")) r.qps = leading_int<std::uint32_t>(*v);
    if (!r.mtu)
      if (auto v = banner_value(line, "Mtu")) r.mtu = leading_int<std::uint32_t>(*v);
  }
}

// ---- result table ----------------------------------------------------------------------------

enum class Column : std::uint8_t {
  bytes,
  sl,
  iterations,
  bw_peak,
  bw_average,
  msg_rate,
  t_min,
  t_max,
  t_typical,
  t_avg,
  t_stdev,
  p99,
  p999,
  tps,
};

struct Label {
  std::string_view text;
  Column column;
};
// "99.9% percentile[" does not contain "99% percentile[", so each label is found only once.
constexpr std::array<Label, 14> labels{{
    {"#bytes", Column::bytes},
    {"#sl", Column::sl},
    {"#iterations", Column::iterations},
    {"BW peak[", Column::bw_peak},
    {"BW average[", Column::bw_average},
    {"MsgRate[", Column::msg_rate},
    {"t_min[", Column::t_min},
    {"t_max[", Column::t_max},
    {"t_typical[", Column::t_typical},
    {"t_avg[", Column::t_avg},
    {"t_stdev[", Column::t_stdev},
    {"99% percentile[", Column::p99},
    {"99.9% percentile[", Column::p999},
    {"tps average", Column::tps},
}};

enum class Kind : std::uint8_t { bandwidth, latency, latency_duration };

struct Header {
  Kind kind = Kind::bandwidth;
  bool mebibytes = false;       // MB/sec (MiB/s in fact) rather than Gb/sec
  std::vector<Column> columns;  // in the order the header prints them
  bool has(Column c) const { return std::find(columns.begin(), columns.end(), c) != columns.end(); }
};

// The header line, or nothing when the line is not one; an unknown bandwidth unit is an error
// rather than a guess.
std::optional<Header> read_header(std::string_view line, std::string& error) {
  if (line.find("#bytes") == std::string_view::npos ||
      line.find("#iterations") == std::string_view::npos)
    return std::nullopt;
  std::vector<std::pair<std::size_t, Column>> found;
  for (const Label& l : labels)
    if (const std::size_t pos = line.find(l.text); pos != std::string_view::npos)
      found.emplace_back(pos, l.column);
  std::sort(found.begin(), found.end());
  Header h;
  for (const auto& f : found) h.columns.push_back(f.second);

  if (h.has(Column::bw_peak) && h.has(Column::bw_average) && h.has(Column::msg_rate)) {
    h.kind = Kind::bandwidth;
    const std::string_view unit = line.substr(line.find("BW peak[") + 8);
    if (unit.starts_with("Gb/sec]")) {
      h.mebibytes = false;
    } else if (unit.starts_with("MB/sec]") || unit.starts_with("MiB/sec]")) {
      h.mebibytes = true;
    } else {
      error = "unknown bandwidth unit in the table header " + quoted(trim(line));
      return std::nullopt;
    }
  } else if (h.has(Column::t_typical)) {
    h.kind = Kind::latency;
  } else if (h.has(Column::t_avg)) {
    h.kind = Kind::latency_duration;
  } else {
    return std::nullopt;  // a table this reader does not know (fs_rate, ...): not a result
  }
  return h;
}

// MiB/s (what perftest labels MB/sec) to Gbit/s.
double mib_to_gbps(double mib) {
  return mib * 1048576.0 * 8.0 / 1e9;
}

struct Row {
  std::uint64_t bytes = 0, iterations = 0;
  std::vector<std::pair<Column, double>> values;
  std::optional<double> get(Column c) const {
    for (const auto& v : values)
      if (v.first == c) return v.second;
    return std::nullopt;
  }
};

// One table row; fields beyond the header's labels (per-port columns, CPU_Util) are ignored.
std::optional<Row> read_row(std::string_view line, const std::vector<std::string_view>& fields,
                            const Header& h, std::string& error) {
  if (fields.size() < h.columns.size()) {
    error = "truncated result row " + quoted(trim(line)) + ": " + std::to_string(fields.size()) +
            " of the " + std::to_string(h.columns.size()) + " columns its header names";
    return std::nullopt;
  }
  Row row;
  for (std::size_t i = 0; i < h.columns.size(); ++i) {
    const Column c = h.columns[i];
    if (c == Column::bytes || c == Column::iterations || c == Column::sl) {
      const auto v = to_int<std::uint64_t>(fields[i]);
      if (!v) {
        error = "result row " + quoted(trim(line)) + ": " + quoted(fields[i]) +
                " is not a whole number";
        return std::nullopt;
      }
      if (c == Column::bytes) row.bytes = *v;
      if (c == Column::iterations) row.iterations = *v;
      continue;
    }
    const auto v = to_measure(fields[i]);
    if (!v) {
      error = "result row " + quoted(trim(line)) + ": " + quoted(fields[i]) +
              " is not a finite non-negative number";
      return std::nullopt;
    }
    row.values.emplace_back(c, *v);
  }
  return row;
}

void fill_result(const Header& h, const Row& row, Report& r) {
  if (h.kind == Kind::bandwidth) {
    const double scale = h.mebibytes ? mib_to_gbps(1.0) : 1.0;
    r.layout = h.mebibytes ? "perftest stdout table (MB/sec)" : "perftest stdout table (Gb/sec)";
    const double peak = row.get(Column::bw_peak).value_or(0) * scale;
    r.bw = BwRow{.bytes = row.bytes,
                 .iterations = row.iterations,
                 .peak_gbps = peak > 0 ? std::optional<double>(peak) : std::nullopt,
                 .average_gbps = row.get(Column::bw_average).value_or(0) * scale,
                 .msg_rate_mpps = row.get(Column::msg_rate).value_or(0)};
    return;
  }
  r.layout = h.kind == Kind::latency ? "perftest stdout table (latency)"
                                     : "perftest stdout table (latency, duration)";
  LatRow lat;
  lat.bytes = row.bytes;
  lat.iterations = row.iterations;
  lat.min_us = row.get(Column::t_min);
  lat.max_us = row.get(Column::t_max);
  lat.typical_us = row.get(Column::t_typical);
  lat.avg_us = row.get(Column::t_avg);
  lat.stdev_us = row.get(Column::t_stdev);
  lat.p99_us = row.get(Column::p99);
  lat.p999_us = row.get(Column::p999);
  lat.tps = row.get(Column::tps);
  r.lat = lat;
}

ParseResult failure(std::string why, std::string_view text) {
  // perftest's own complaint says more than "no table" does.
  const std::string perftest_says = find_error(text);
  if (!perftest_says.empty()) why += "; perftest said: " + perftest_says;
  return ParseResult{.report = std::nullopt, .error = std::move(why)};
}

}  // namespace

ParseResult parse_text(std::string_view stdout_text) {
  if (trim(stdout_text).empty())
    return ParseResult{.report = std::nullopt, .error = "empty output: perftest printed nothing"};

  const std::vector<std::string_view> lines = split_lines(stdout_text);
  std::optional<Header> header;  // the table the following rows belong to
  std::optional<Header> result_header;
  std::optional<Row> result;  // the last row: with -a, the largest size; with -D, the only one
  std::size_t first_header_line = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string error;
    if (auto h = read_header(lines[i], error)) {
      header = std::move(h);
      first_header_line = std::min(first_header_line, i);
      continue;
    }
    if (!error.empty()) return failure(std::move(error), stdout_text);
    if (!header) continue;
    const std::vector<std::string_view> fields = split_fields(lines[i]);
    // Rows start with the byte count; warnings, histogram lines ("1, 2.35") and the closing
    // dashes in between do not.
    if (fields.empty() || !all_digits(fields.front())) continue;
    auto row = read_row(lines[i], fields, *header, error);
    if (!row) return failure(std::move(error), stdout_text);
    result = std::move(row);
    result_header = header;
  }

  if (!header)
    return failure("no perftest result table (no '#bytes #iterations' header) in the output",
                   stdout_text);
  if (!result)
    return failure("no result row after the '#bytes' header: the run stopped before reporting",
                   stdout_text);

  Report r;
  read_banner(lines, first_header_line, r);
  fill_result(*result_header, *result, r);
  return ParseResult{.report = std::move(r), .error = {}};
}

}  // namespace rocehil::perftest
