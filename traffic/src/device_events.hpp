#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic {

// The events a provider has seen and not yet handed out: bounded (max_device_events), so a
// flapping port cannot grow it; what does not fit is counted and said in the last one kept.
// Filled by the provider's event reader (verbs: its own thread) and drained by take_events().
class DeviceEventLog {
 public:
  void add(DeviceEvent event);
  std::vector<DeviceEvent> take();

 private:
  std::mutex mutex_;
  std::vector<DeviceEvent> events_;
  std::uint64_t dropped_ = 0;
};

// CLOCK_REALTIME in nanoseconds: when an event was seen.
std::int64_t wall_clock_ns() noexcept;

}  // namespace rocehil::traffic
