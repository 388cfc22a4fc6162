#include "device_events.hpp"

#include <fmt/format.h>
#include <time.h>

namespace rocehil::traffic {

void DeviceEventLog::add(DeviceEvent event) {
  const std::lock_guard lock(mutex_);
  if (events_.size() < max_device_events)
    events_.push_back(std::move(event));
  else
    ++dropped_;
}

std::vector<DeviceEvent> DeviceEventLog::take() {
  const std::lock_guard lock(mutex_);
  std::vector<DeviceEvent> out;
  out.swap(events_);
  if (dropped_ > 0 && !out.empty())
    out.back().detail += fmt::format(" (and {} more events not kept)", dropped_);
  dropped_ = 0;
  return out;
}

std::int64_t wall_clock_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace rocehil::traffic
