#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rocehil {

// How long a PAUSE/PFC request of `quanta` stops a link of `link_gbps`: one quantum is 512 bit
// times, so 5.12 ns at 100G, and 0xFFFF quanta hold a 100G link for 335.5 us.
constexpr double pause_quanta_to_ns(std::uint64_t quanta, double link_gbps) {
  return static_cast<double>(quanta) * 512.0 / link_gbps;
}

// "1.23 GB", "512 B": decimal units, as link rates and nccl-tests' GB/s are decimal.
std::string format_bytes(double bytes);
// "12.3 Mpps" style: value with a k/M/G prefix and the given unit.
std::string format_si(double value, const char* unit);
// "1.234 s", "12.5 ms", "830 us", "95 ns".
std::string format_duration_ns(double ns);
// A whole number with its digits grouped by thousands: "44,329,200", "1,000", "0". The one
// place digits are grouped: format_count and format_number print through it.
std::string group_digits(std::uint64_t n);
// A count as people read it: "44,329,200", "-1,234", "0"; a value that is not whole keeps 4
// significant digits ("0.1543").
std::string format_count(double n);
// A measured number for people: whole values grouped ("44,329,200"), others with 4 significant
// digits without an exponent up to a million ("10890.5" reads "10,890.5"), never "4.43e+07".
std::string format_number(double v);
// "1 host", "2 hosts", "3 switches": the number and its noun, plural where it is not one.
std::string count_of(std::uint64_t n, std::string_view noun);

}  // namespace rocehil
