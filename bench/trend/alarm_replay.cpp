// The nightly alarm of `rocehil trend --fail-on-change worse`, replayed: synthetic histories of
// one series, a run a night, the trend's analysis (reports::changes_in, what trend() does for
// each series) after every night as a nightly job runs it. For each step size and night-to-night
// spread: on which night after the step the alarm first fires (the detection delay), and how
// often it fires on histories with no step at all (false alarms per nightly run).
// Not a speed benchmark: what it measures is what the defaults (--p, --min-runs) buy.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "rocehil/reports/trend.hpp"

namespace reports = rocehil::reports;

namespace {

// The nights (1-based) on which the job run after that night exits 1.
std::vector<int> alarm_nights(const std::vector<double>& nights,
                              const reports::ChangePointOptions& detection) {
  std::vector<int> out;
  std::vector<std::optional<double>> values;
  for (std::size_t n = 0; n < nights.size(); ++n) {
    values.emplace_back(nights[n]);
    for (const auto& c : reports::changes_in(values, rocehil::suites::Better::higher, detection))
      if (c.worse && c.first_found) {
        out.push_back(static_cast<int>(n + 1));
        break;
      }
  }
  return out;
}

std::vector<double> history(std::mt19937_64& random, int nights, int step_night, double step,
                            double spread) {
  std::normal_distribution<double> vary(1.0, spread);
  std::vector<double> out;
  for (int n = 1; n <= nights; ++n)
    out.push_back(100 * (n >= step_night ? 1 - step : 1.0) * std::max(0.01, vary(random)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Replays synthetic nightly histories through the trend alarm.");
  int histories = 200, nights = 24, step_night = 7;
  reports::ChangePointOptions detection;
  detection.min_change_pct = 5;  // trend's default
  app.add_option("--histories", histories, "Histories per step and spread")->capture_default_str();
  app.add_option("--nights", nights, "Nights in each history")->capture_default_str();
  app.add_option("--step-night", step_night, "The first night at the new level")
      ->capture_default_str();
  app.add_option("--p", detection.max_p, "trend --p")->capture_default_str();
  app.add_option("--min-runs", detection.min_segment, "trend --min-runs")->capture_default_str();
  app.add_option("--min-change", detection.min_change_pct, "trend --min-change")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  fmt::print(
      "alarm replay: {} histories of {} nights each, step from night {}, --p {}, "
      "--min-runs {}, --min-change {}\n\n",
      histories, nights, step_night, detection.max_p, detection.min_segment,
      detection.min_change_pct);
  fmt::print("{:>6} {:>7} | {:>6} {:>6} {:>6} {:>6} {:>7} | {:>6}\n", "step", "spread", "N+0-1",
             "N+2", "N+3", "N+4-6", "later", "missed");
  struct Row {
    double step, spread;
  };
  for (const Row r : {Row{0.10, 0.02}, Row{0.25, 0.02}, Row{0.20, 0.05}, Row{0.50, 0.10},
                      Row{0.72, 0.25}, Row{0.12, 0.08}}) {
    std::map<std::string, int> by;
    for (int h = 1; h <= histories; ++h) {
      std::mt19937_64 random(static_cast<std::uint64_t>(h) * 7919 +
                             static_cast<std::uint64_t>(r.step * 1000 + r.spread * 100));
      const auto fired =
          alarm_nights(history(random, nights, step_night, r.step, r.spread), detection);
      const auto first =
          std::find_if(fired.begin(), fired.end(), [&](int n) { return n >= step_night; });
      if (first == fired.end()) {
        ++by["missed"];
        continue;
      }
      const int delay = *first - step_night;
      ++by[delay <= 1   ? "early"
           : delay == 2 ? "2"
           : delay == 3 ? "3"
           : delay <= 6 ? "4-6"
                        : "later"];
    }
    fmt::print("{:>5.0f}% {:>6.0f}% | {:>6} {:>6} {:>6} {:>6} {:>7} | {:>6}\n", r.step * 100,
               r.spread * 100, by["early"], by["2"], by["3"], by["4-6"], by["later"], by["missed"]);
  }
  fmt::print("\nno step (false alarms):\n");
  for (const double spread : {0.02, 0.10, 0.25}) {
    int alarms = 0, jobs = 0;
    for (int h = 1; h <= histories; ++h) {
      std::mt19937_64 random(static_cast<std::uint64_t>(h) * 104729 + 17);
      alarms += static_cast<int>(
          alarm_nights(history(random, nights, nights + 1, 0, spread), detection).size());
      jobs += nights;
    }
    fmt::print("  spread {:>3.0f}%: {} alarm(s) in {} nightly runs ({:.2f} per 1,000)\n",
               spread * 100, alarms, jobs, 1000.0 * alarms / jobs);
  }
  return 0;
}
