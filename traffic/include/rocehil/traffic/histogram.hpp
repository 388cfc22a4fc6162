#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace rocehil::traffic {

// Latencies in nanoseconds, kept in log-linear buckets (16 per power of two: at most 1/16 = 6 %
// relative error) so recording is a few instructions and never allocates, and percentiles of a
// ten-million-sample run cost nothing to keep. Min, max, count and sum are exact.
class LatencyHistogram {
 public:
  static constexpr int sub_buckets = 16;
  static constexpr int powers = 48;  // up to 2^48 ns, about three days

  void record(std::uint64_t ns) noexcept;
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  std::uint64_t max() const noexcept { return max_; }
  double mean() const noexcept;
  // The value at or below which `fraction` of the samples lie (0.5: median), as the upper edge
  // of its bucket clamped to [min, max]; 0 without samples.
  std::uint64_t percentile(double fraction) const noexcept;

  struct Bucket {
    std::uint64_t upper_ns;
    std::uint64_t count;
  };
  std::vector<Bucket> nonempty_buckets() const;  // for reports; allocates

  static std::size_t bucket_of(std::uint64_t ns) noexcept;
  static std::uint64_t bucket_upper(std::size_t index) noexcept;

 private:
  std::array<std::uint64_t, static_cast<std::size_t>(sub_buckets* powers)> counts_{};
  std::uint64_t count_ = 0, sum_ = 0, min_ = ~std::uint64_t{0}, max_ = 0;
};

}  // namespace rocehil::traffic
