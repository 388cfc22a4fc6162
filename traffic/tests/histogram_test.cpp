#include "rocehil/traffic/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace rocehil::traffic {
namespace {

TEST(LatencyHistogram, BucketsAreContiguousAndCoverTheirValues) {
  for (std::uint64_t v : {0ull, 1ull, 15ull, 16ull, 31ull, 32ull, 33ull, 1000ull, 123456789ull,
                          (1ull << 40) + 12345}) {
    const std::size_t b = LatencyHistogram::bucket_of(v);
    EXPECT_GE(LatencyHistogram::bucket_upper(b), v) << v;
    if (b > 0) {
      EXPECT_LT(LatencyHistogram::bucket_upper(b - 1), v) << v;
    }
  }
  for (std::size_t i = 0; i + 1 < 16 * 40; ++i) {
    EXPECT_EQ(LatencyHistogram::bucket_of(LatencyHistogram::bucket_upper(i)), i);
    EXPECT_EQ(LatencyHistogram::bucket_upper(i) + 1,
              LatencyHistogram::bucket_upper(i + 1) -
                  (LatencyHistogram::bucket_upper(i + 1) - LatencyHistogram::bucket_upper(i) - 1))
        << "no gap after bucket " << i;
  }
}

TEST(LatencyHistogram, ExactStatisticsAndPercentilesWithinABucket) {
  LatencyHistogram h;
  std::mt19937_64 random(5);
  std::lognormal_distribution<double> latency(8.0, 0.7);  // around 3 us with a long tail
  std::vector<std::uint64_t> samples;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::uint64_t>(latency(random));
    samples.push_back(v);
    h.record(v);
  }
  std::sort(samples.begin(), samples.end());
  EXPECT_EQ(h.count(), samples.size());
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
  double sum = 0;
  for (auto v : samples) sum += static_cast<double>(v);
  EXPECT_DOUBLE_EQ(h.mean(), sum / static_cast<double>(samples.size()));
  for (double p : {0.5, 0.9, 0.99, 0.999}) {
    // The true value: the sample at rank ceil(p * n).
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(samples.size())));
    const double exact = static_cast<double>(samples[rank - 1]);
    const double got = static_cast<double>(h.percentile(p));
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(got, exact * (1 + 1.0 / 16)) << p;
  }
  EXPECT_EQ(h.percentile(1.0), samples.back());
}

TEST(LatencyHistogram, EmptyAndSingleSample) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  EXPECT_EQ(h.min(), 0u);
  h.record(4242);
  EXPECT_EQ(h.percentile(0.5), 4242u);
  EXPECT_EQ(h.percentile(0.999), 4242u);
  ASSERT_EQ(h.nonempty_buckets().size(), 1u);
  EXPECT_EQ(h.nonempty_buckets()[0].count, 1u);
}

}  // namespace
}  // namespace rocehil::traffic
