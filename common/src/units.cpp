#include "rocehil/common/units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace rocehil {

std::string format_si(double value, const char* unit) {
  static constexpr const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
  std::size_t i = 0;
  double v = value;
  while (std::fabs(v) >= 1000.0 && i + 1 < std::size(prefixes)) {
    v /= 1000.0;
    ++i;
  }
  // Counts print whole; a fractional rate such as 0.81 hosts/s keeps three digits, like the rest.
  if (i == 0 && v == std::floor(v)) return fmt::format("{:g} {}", v, unit);
  if (i == 0) return fmt::format("{:.3g} {}", v, unit);
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

std::string format_bytes(double bytes) {
  return format_si(bytes, "B");
}

std::string group_digits(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  // Built front to back: inserting commas into `digits` made gcc 12 warn (-Wrestrict) about a
  // memcpy it cannot prove does not overlap.
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_count(double n) {
  if (!std::isfinite(n) || n != std::floor(n) || std::fabs(n) >= 1e18)
    return fmt::format("{:.4g}", n);
  const std::string digits = group_digits(static_cast<std::uint64_t>(std::fabs(n)));
  return n < 0 ? "-" + digits : digits;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (v == std::floor(v) && std::fabs(v) < 1e18) return format_count(v);
  const double a = std::fabs(v);
  if (a >= 1e4) {
    // Whole part grouped, one decimal: 10,890.5.
    const double rounded = std::round(v * 10) / 10;
    const double whole = std::trunc(rounded);
    const int tenth = static_cast<int>(std::lround(std::fabs(rounded - whole) * 10));
    const std::string head = format_count(whole);
    return fmt::format("{}{}.{}", v < 0 && whole == 0 ? "-" : "", head, tenth);
  }
  if (a >= 1e-3) return fmt::format("{:.4g}", v);
  return fmt::format("{:.3g}", v);
}

std::string count_of(std::uint64_t n, std::string_view noun) {
  if (n == 1) return fmt::format("1 {}", noun);
  const bool sibilant =
      noun.ends_with("s") || noun.ends_with("x") || noun.ends_with("ch") || noun.ends_with("sh");
  return fmt::format("{} {}{}", n, noun, sibilant ? "es" : "s");
}

std::string format_duration_ns(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

}  // namespace rocehil
