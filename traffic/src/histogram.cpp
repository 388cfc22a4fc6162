#include "rocehil/traffic/histogram.hpp"

#include <algorithm>
#include <bit>

namespace rocehil::traffic {

// Values below 16 ns get a bucket each; above, bucket = 16 * (exponent - 3) + the next 4 bits.
std::size_t LatencyHistogram::bucket_of(std::uint64_t ns) noexcept {
  if (ns < sub_buckets) return static_cast<std::size_t>(ns);
  const int exponent = 63 - std::countl_zero(ns);  // ns >= 16: exponent >= 4
  const auto mantissa = static_cast<std::size_t>((ns >> (exponent - 4)) & (sub_buckets - 1));
  const auto index = static_cast<std::size_t>(sub_buckets * (exponent - 3)) + mantissa;
  return std::min(index, static_cast<std::size_t>(sub_buckets * powers - 1));
}

std::uint64_t LatencyHistogram::bucket_upper(std::size_t index) noexcept {
  if (index < sub_buckets) return index;
  const int exponent = static_cast<int>(index / sub_buckets) + 3;
  const std::uint64_t mantissa = index % sub_buckets;
  const std::uint64_t base = (std::uint64_t{sub_buckets} + mantissa) << (exponent - 4);
  return base + (std::uint64_t{1} << (exponent - 4)) - 1;
}

void LatencyHistogram::record(std::uint64_t ns) noexcept {
  ++counts_[bucket_of(ns)];
  ++count_;
  sum_ += ns;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
}

double LatencyHistogram::mean() const noexcept {
  return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

std::uint64_t LatencyHistogram::percentile(double fraction) const noexcept {
  if (count_ == 0) return 0;
  // The rank of the sample asked for, 1-based: the smallest rank covering the fraction.
  auto rank = static_cast<std::uint64_t>(fraction * static_cast<double>(count_) + 0.999999);
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(bucket_upper(i), min(), max_);
  }
  return max_;
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::nonempty_buckets() const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < counts_.size(); ++i)
    if (counts_[i] != 0) out.push_back({bucket_upper(i), counts_[i]});
  return out;
}

}  // namespace rocehil::traffic
