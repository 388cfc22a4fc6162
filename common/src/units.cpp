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

std::string format_duration_ns(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3g} us", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

}  // namespace rocehil
