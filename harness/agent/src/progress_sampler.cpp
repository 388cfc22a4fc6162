#include "progress_sampler.hpp"

#include <algorithm>

namespace rocehil::agent {

ProgressSampler::ProgressSampler(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 2)) {}

void ProgressSampler::begin(std::int64_t start_ns, std::uint32_t period_us) {
  timeline_.start_ns = start_ns;
  timeline_.period_us = period_us;
  timeline_.t_us.clear();
  timeline_.bytes.clear();
  timeline_.t_us.reserve(capacity_);
  timeline_.bytes.reserve(capacity_);
}

void ProgressSampler::add(std::uint64_t t_us, std::uint64_t bytes) {
  if (!timeline_.t_us.empty() && t_us < timeline_.t_us.back() + timeline_.period_us) return;
  if (timeline_.t_us.size() == capacity_) {
    halve();
    if (t_us < timeline_.t_us.back() + timeline_.period_us) return;
  }
  timeline_.t_us.push_back(t_us);
  timeline_.bytes.push_back(bytes);
}

void ProgressSampler::finish(std::uint64_t t_us, std::uint64_t bytes) {
  if (!timeline_.t_us.empty() && t_us < timeline_.t_us.back()) t_us = timeline_.t_us.back();
  if (timeline_.t_us.size() == capacity_) halve();
  timeline_.t_us.push_back(t_us);
  timeline_.bytes.push_back(std::max(bytes, timeline_.bytes.empty() ? 0 : timeline_.bytes.back()));
}

void ProgressSampler::halve() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < timeline_.t_us.size(); i += 2, ++kept) {
    timeline_.t_us[kept] = timeline_.t_us[i];
    timeline_.bytes[kept] = timeline_.bytes[i];
  }
  timeline_.t_us.resize(kept);
  timeline_.bytes.resize(kept);
  timeline_.period_us *= 2;
}

}  // namespace rocehil::agent
