#pragma once

// A case's switches polled on a thread of their own while its traffic runs: each port's octets
// every period, for the picture a failover case is read from (which uplinks carried the traffic
// before, during and after an event) and a recovery time measured by the fabric itself.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics/switch_polling.hpp"
#include "rocehil/run/switch_timeline.hpp"

namespace rocehil::run {

class SwitchSampler {
 public:
  SwitchSampler() = default;
  ~SwitchSampler() { stop(); }
  SwitchSampler(const SwitchSampler&) = delete;
  SwitchSampler& operator=(const SwitchSampler&) = delete;

  // Polls `names` every `period` until stop(), the first poll at `first_unix_ns` (at once if
  // that has passed). Once.
  void start(SwitchPolling& polling, std::vector<std::string> names,
             std::chrono::milliseconds period, std::int64_t first_unix_ns);
  bool running() const { return thread_.joinable(); }
  // Ends the polling (after the poll under way) and returns every sample taken.
  std::vector<SwitchSample> stop();

 private:
  void loop(SwitchPolling& polling, std::vector<std::string> names,
            std::chrono::milliseconds period, std::int64_t first_unix_ns);

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<SwitchSample> samples_;
};

}  // namespace rocehil::run
