#include "rocehil/suites/rate.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace rocehil::suites {

namespace {

constexpr double max_bits_per_s = 1.6e12;  // a 1.6T port, the fastest Ethernet there is

// The units as Linux tc and iperf3's users write them, decimal as links are rated.
std::optional<double> unit_scale(std::string_view unit) {
  if (unit == "bit/s") return 1.0;
  if (unit == "Kbit/s" || unit == "kbit/s") return 1e3;
  if (unit == "Mbit/s") return 1e6;
  if (unit == "Gbit/s") return 1e9;
  if (unit == "Tbit/s") return 1e12;
  return std::nullopt;
}

}  // namespace

std::optional<Rate> parse_rate(std::string_view text, std::string& why) {
  const auto bad = [&](std::string reason) {
    why = std::move(reason);
    return std::optional<Rate>{};
  };
  const char* begin = text.data();
  const char* end = begin + text.size();
  double number = 0;
  const auto [after, ec] = std::from_chars(begin, end, number);
  const std::string_view unit(after, static_cast<std::size_t>(end - after));
  const std::string example = "such as 55% (of the sender's link), 25Gbit/s or 400Mbit/s";
  if (ec != std::errc() || after == begin || !std::isfinite(number))
    return bad(fmt::format("a rate is a number with a unit, {}", example));
  Rate r;
  r.text = std::string(text);
  if (unit == "%") {
    if (!(number > 0 && number <= 100))
      return bad(
          fmt::format("a share of the link is more than 0% and at most 100%, got {}", r.text));
    r.percent = true;
    r.value = number;
    return r;
  }
  const auto scale = unit_scale(unit);
  if (!scale)
    return bad(
        fmt::format("'{}' is not a unit of rate; write %, Kbit/s, Mbit/s, Gbit/s or "
                    "Tbit/s, {}",
                    unit, example));
  r.value = number * *scale;
  if (!(r.value >= 1e3 && r.value <= max_bits_per_s))
    return bad(fmt::format("a rate is from 1Kbit/s to 1.6Tbit/s, got {}", r.text));
  return r;
}

}  // namespace rocehil::suites
