#pragma once

#include <cstddef>
#include <cstdint>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {

// Samples a sender's completed bytes into a ProgressTimeline of bounded size. Its storage is
// reserved once per run: a sample is two stores, never an allocation. Full, it keeps every
// other sample and doubles its period, so any run fits one results line at the finest period
// its length allows.
class ProgressSampler {
 public:
  explicit ProgressSampler(std::size_t capacity = max_timeline_samples);

  void begin(std::int64_t start_ns, std::uint32_t period_us);
  // A sample at t_us since the start; one sooner than the period after the last is not kept.
  void add(std::uint64_t t_us, std::uint64_t bytes);
  // The last sample, when the work ended: kept however soon after the one before.
  void finish(std::uint64_t t_us, std::uint64_t bytes);

  const ProgressTimeline& timeline() const { return timeline_; }
  std::uint32_t period_us() const { return timeline_.period_us; }

 private:
  void halve();

  std::size_t capacity_;
  ProgressTimeline timeline_;
};

}  // namespace rocehil::agent
