#include "metrics/switch_sampler.hpp"

#include <algorithm>
#include <exception>

namespace rocehil::run {

void SwitchSampler::start(SwitchPolling& polling, std::vector<std::string> names,
                          std::chrono::milliseconds period, std::int64_t first_unix_ns) {
  if (thread_.joinable() || names.empty()) return;
  stopping_ = false;
  thread_ =
      std::thread([this, &polling, names = std::move(names), period, first_unix_ns]() mutable {
        loop(polling, std::move(names), period, first_unix_ns);
      });
}

void SwitchSampler::loop(SwitchPolling& polling, std::vector<std::string> names,
                         std::chrono::milliseconds period, std::int64_t first_unix_ns) {
  // Polls on a fixed grid from the first poll: a slow answer shortens the next wait, never
  // shifts the grid.
  const auto wall_now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  auto next = std::chrono::steady_clock::now() +
              std::chrono::nanoseconds(std::max<std::int64_t>(0, first_unix_ns - wall_now_ns));
  {
    std::unique_lock lock(mutex_);
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
  // Each wait ends at the next poll or at stop(), which gets one poll more: the counters after
  // the traffic's last bytes.
  for (;;) {
    bool last = false;  // begun after stop(): the poll after the traffic
    {
      const std::lock_guard lock(mutex_);
      last = stopping_;
    }
    SwitchSample sample;
    try {
      sample = polling.traffic(names);
    } catch (const std::exception& e) {
      // A poll that failed as a whole is a gap in every switch's series, said in each.
      for (const auto& name : names) {
        switches::SwitchSnapshot s;
        s.switch_name = name;
        s.error = e.what();
        sample.push_back(std::move(s));
      }
    }
    std::unique_lock lock(mutex_);
    samples_.push_back(std::move(sample));
    if (last) return;
    const auto now = std::chrono::steady_clock::now();
    while (next <= now) next += period;
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

std::vector<SwitchSample> SwitchSampler::stop() {
  if (!thread_.joinable()) return {};
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  return std::move(samples_);
}

}  // namespace rocehil::run
