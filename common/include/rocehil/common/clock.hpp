#pragma once

#include <time.h>

#include <cstdint>

namespace rocehil {

// Nanoseconds since the Unix epoch (CLOCK_REALTIME): the clock hosts agree on through NTP/PTP,
// used for synchronized starts and capture timestamps. Not for measuring intervals.
inline std::int64_t wall_clock_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Nanoseconds of CLOCK_MONOTONIC: for intervals and timeouts, immune to clock steps.
inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace rocehil
