#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/traffic/collective.hpp"

namespace rocehil::traffic {

// From what every rank reported to the numbers nccl-tests prints, and the ones it does not.

struct RankTiming {
  std::int64_t start_ns = 0;                   // wall clock: the measured part began
  std::vector<std::int64_t> iteration_end_ns;  // wall clock: this rank's part of each iteration
  std::vector<std::uint64_t> wait_ns;          // per step: waiting for data
  std::vector<std::uint64_t> step_ns;          // per step: its whole time
  // The waits' sum when the rank reported it without each step's (thousands of steps); unset:
  // the sum of wait_ns.
  std::optional<std::uint64_t> wait_total_ns;
};

struct CollectiveSummary {
  std::uint64_t iterations = 0;  // completed by every rank
  // The collective's time per iteration: iteration i ends when its last rank ends it, and
  // begins when iteration i-1 ended on its last rank (the first, when the last rank began).
  double time_us = 0;  // mean, as nccl-tests' time column
  double time_p50_us = 0, time_p99_us = 0, time_max_us = 0;
  double time_cv = 0;                // standard deviation / mean over iterations
  std::vector<double> iteration_us;  // each iteration's time, in order
  // nccl-tests: algbw = bytes / time (GB/s, 1e9 bytes); busbw = algbw x the pattern's factor.
  double algbw_gbytes_s = 0, busbw_gbytes_s = 0;
  double busbw_gbps = 0;  // the same in bits, to compare with a link's speed
  // Per rank, over the measured iterations: time spent waiting for data. In a ring everyone
  // waits for the slowest rank, which itself waits least: it is named as the straggler when it
  // waited less than half of what the median rank did.
  std::vector<double> wait_ms;
  int straggler = -1;
};

// Throws rocehil::Error (bad input) when `ranks` does not hold one entry per rank.
CollectiveSummary summarize_collective(const CollectivePlan& plan,
                                       const std::vector<RankTiming>& ranks);

// Pairwise: the measured bandwidth of every pair, from each rank's data-step times.
struct PairwiseMatrix {
  int ranks = 0;
  // ranks x ranks, row = sender's view; NaN on the diagonal and where no iteration was timed
  std::vector<double> gbps;
  double at(int a, int b) const { return gbps[static_cast<std::size_t>(a) * ranks + b]; }
  struct Outlier {
    int a = 0, b = 0;
    double gbps = 0;
  };
  double median_gbps = 0;         // of the pairs measured; NaN when none was
  std::vector<Outlier> outliers;  // pairs under (1 - tolerance) x the median, slowest first
  // Ranks in at least half of their pairs' outliers (and in more than one): the common factor,
  // a bad NIC, cable or port, named rather than its hundreds of pairs.
  std::vector<int> suspects;
};

// `iterations` measured; `tolerance` e.g. 0.2 flags pairs below 80 % of the median.
PairwiseMatrix pairwise_matrix(const CollectivePlan& plan, const std::vector<RankTiming>& ranks,
                               std::uint64_t iterations, double tolerance);

}  // namespace rocehil::traffic
