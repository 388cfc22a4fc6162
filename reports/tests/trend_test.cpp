// Trends over a history built as `rocehil run` records runs: a planted step found at its run
// with what changed there, a setting changed without effect, gaps, and the nightly alarm.
#include "rocehil/reports/trend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <random>

#include "record_fixture.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/reports/trend_html.hpp"
#include "temp_db.hpp"

namespace rocehil::reports {
namespace {

using testing::TempDb;

nlohmann::json switch_setting(const std::string& name, const std::string& value) {
  return {{"host", ""}, {"netdev", ""}, {"name", name}, {"value", value}};
}

// Night n (1-based) of a suite with an allreduce and a latency case; from night 9 the uplink is
// 20% slower (busbw down, latency up), from night 13 a setting that does nothing changed.
RunRecord night(int n, std::mt19937_64& random, bool with_latency = true) {
  std::normal_distribution<double> jitter(0, 0.01);
  RunRecord run;
  run.run_id = fmt::format("202611{:02}T020000Z-nightly", n);
  run.started_at = fmt::format("2026-11-{:02}T02:00:00Z", n);
  run.suite_name = "nightly";
  run.rocehil_version = "0.9.0";
  const double slower = n >= 9 ? 0.8 : 1.0;
  run.cases.push_back(testing::graded_case("allreduce", {"busbw_gbps > 0"},
                                           {{"busbw_gbps", 100 * slower * (1 + jitter(random))}}));
  if (with_latency)
    run.cases.push_back(testing::graded_case("lat", {"lat_p99_us < 100"},
                                             {{"lat_p99_us", 10 / slower * (1 + jitter(random))}}));
  run.fabric_settings = {{"in_force",
                          {switch_setting("switch.uplink_mbps", n >= 9 ? "800" : "1000"),
                           switch_setting("switch.ecn_mark_mbps", n >= 13 ? "900" : "950")}}};
  return run;
}

const TrendSeries& series_of(const Trend& t, const std::string& case_id) {
  for (const auto& s : t.series)
    if (s.case_id == case_id) return s;
  throw std::runtime_error("no series for " + case_id);
}

TrendOptions of_suite(const std::string& suite, int last = 60) {
  TrendOptions o;
  o.suite = suite;
  o.last = last;
  return o;
}

// The trend of 16 nights, night 5 without its latency case.
Trend sixteen_nights() {
  TempDb tmp;
  History h = History::open(tmp.path);
  std::mt19937_64 random(2);
  for (int n = 1; n <= 16; ++n) h.record(night(n, random, /*with_latency=*/n != 5));
  return trend(h, of_suite("nightly"));
}

TEST(Trend, AStepIsFoundAtItsRunWithWhatChangedThereAndNoneWhereNothingDid) {
  const Trend t = sixteen_nights();
  ASSERT_EQ(t.runs.size(), 16u);
  EXPECT_EQ(t.runs.front().run_id, "20261101T020000Z-nightly");  // oldest first

  const TrendSeries& bw = series_of(t, "allreduce");
  EXPECT_EQ(bw.metric, "busbw_gbps");
  EXPECT_EQ(bw.better, suites::Better::higher);
  ASSERT_EQ(bw.changes.size(), 1u);
  const TrendChange& c = bw.changes[0];
  EXPECT_EQ(c.run, 8u);  // night 9
  EXPECT_EQ(c.before, 7u);
  EXPECT_TRUE(c.worse);
  ASSERT_TRUE(c.change_pct);
  EXPECT_NEAR(*c.change_pct, -20, 2);
  EXPECT_NEAR(c.median_before, 100, 2);
  EXPECT_NEAR(c.median_after, 80, 2);
  ASSERT_EQ(c.changed.size(), 1u);
  EXPECT_EQ(c.changed[0].name, "set switches switch.uplink_mbps");
  EXPECT_EQ(c.changed[0].before, "1000");
  EXPECT_EQ(c.changed[0].after, "800");

  // Latency went up at the same night: worse too. Night 5 did not measure it: a gap, and the
  // change's "before" run is the last one that did.
  const TrendSeries& lat = series_of(t, "lat");
  EXPECT_EQ(lat.metric, "lat_p99_us");
  EXPECT_EQ(lat.better, suites::Better::lower);
  EXPECT_FALSE(lat.values[4].has_value());
  ASSERT_EQ(lat.changes.size(), 1u);
  EXPECT_EQ(lat.changes[0].run, 8u);
  EXPECT_TRUE(lat.changes[0].worse);

  // The nightly alarm: the step was found nights ago, so the newest run finds nothing new.
  EXPECT_FALSE(c.first_found);
  EXPECT_TRUE(first_found_worse_changes(t).empty());

  const auto j = to_json(t);
  EXPECT_EQ(j["series"][1]["values"][4], nullptr);
  EXPECT_EQ(j["series"][0]["changes"][0]["run_id"], "20261109T020000Z-nightly");
  EXPECT_EQ(j["series"][0]["changes"][0]["changed"][0]["after"], "800");
}

TEST(Trend, ThePageChartsEverySeriesMarksItsChangesAndLinksEveryRun) {
  const Trend t = sixteen_nights();
  const std::string page = trend_html(t, "../reports/");
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = page.find(what); at != std::string::npos; at = page.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<svg "), 2u);                     // one chart per series
  EXPECT_EQ(count("stroke-dasharray=\"4 3\""), 2u);  // one change point marked in each
  // Every run's point links to its report, in both charts, and so does the runs table; night 9
  // also from each series' change point. Night 5's latency is a gap: no point.
  EXPECT_EQ(count("<a href=\"../reports/20261109T020000Z-nightly/report.html\">"), 2u + 2 + 1);
  EXPECT_EQ(count("<a href=\"../reports/20261105T020000Z-nightly/report.html\">"), 1u + 1);
  EXPECT_NE(page.find("set switches switch.uplink_mbps"), std::string::npos);
  EXPECT_NE(page.find("<td>1000</td><td>800</td>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);  // nothing fetched
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
}

TEST(Trend, ACaseGlobAndNamedMetricsChooseTheSeries) {
  TempDb tmp;
  History h = History::open(tmp.path);
  std::mt19937_64 random(4);
  for (int n = 1; n <= 6; ++n) h.record(night(n, random));
  TrendOptions chosen = of_suite("nightly");
  chosen.case_glob = "all*";
  chosen.metrics = {"busbw_gbps", "cnps"};
  const Trend t = trend(h, chosen);
  ASSERT_EQ(t.series.size(), 1u);  // cnps was never measured: no series at all
  EXPECT_EQ(t.series[0].case_id, "allreduce");
  EXPECT_TRUE(t.series[0].changes.empty());
  const Trend last3 = trend(h, of_suite("nightly", 3));
  ASSERT_EQ(last3.runs.size(), 3u);
  EXPECT_EQ(last3.runs.front().run_id, "20261104T020000Z-nightly");
}

// One case's nights, a value each, recorded as `rocehil run` does.
RunRecord night_of(int n, double busbw) {
  RunRecord run;
  run.run_id = fmt::format("202611{:02}T020000Z-nightly", n);
  run.started_at = fmt::format("2026-11-{:02}T02:00:00Z", n);
  run.suite_name = "nightly";
  run.rocehil_version = "0.9.0";
  run.cases.push_back(
      testing::graded_case("allreduce", {"busbw_gbps > 0"}, {{"busbw_gbps", busbw}}));
  return run;
}

// The nights on which `trend --fail-on-change worse` run after each night would exit 1.
std::vector<int> alarm_nights(const std::vector<double>& nights, const TrendOptions& options) {
  TempDb tmp;
  History h = History::open(tmp.path);
  std::vector<int> out;
  for (std::size_t n = 1; n <= nights.size(); ++n) {
    h.record(night_of(static_cast<int>(n), nights[n - 1]));
    if (n < 2) continue;
    if (!first_found_worse_changes(trend(h, options)).empty()) out.push_back(static_cast<int>(n));
  }
  return out;
}

TEST(Trend, AClearDropAfterThreeGoodNightsIsFoundOnTheThirdBadOne) {
  // 97% down after three good nights: no ordering of six values can show it, their sizes can.
  const std::vector<double> nights{96.1, 97.4, 95.8, 2.9, 3.1, 2.8};
  TempDb tmp;
  History h = History::open(tmp.path);
  for (int n = 1; n <= 6; ++n) h.record(night_of(n, nights[n - 1]));
  const Trend t = trend(h, of_suite("nightly"));
  ASSERT_EQ(t.series.size(), 1u);
  ASSERT_EQ(t.series[0].changes.size(), 1u);
  const TrendChange& c = t.series[0].changes[0];
  EXPECT_EQ(c.run, 3u);
  EXPECT_TRUE(c.worse);
  EXPECT_TRUE(c.first_found);
  EXPECT_LE(c.p, 0.01);
  EXPECT_LT(c.p_t, 0.005);
  EXPECT_FALSE(c.p_permutation.has_value());  // 20 orderings: it could not reach 0.005
  EXPECT_EQ(c.p, 2 * c.p_t);
  EXPECT_EQ(first_found_worse_changes(t).size(), 1u);
  EXPECT_EQ(alarm_nights(nights, of_suite("nightly")), std::vector<int>{6});
}

// A history replayed night by night, trend run after each as a nightly job does: 12 nights of
// a bandwidth that varies +-15% night to night, 72% lower from night 7. The alarm fires once,
// on night 9, the third night of the new level; never before the step, never again after.
TEST(Trend, TheNightlyAlarmFiresOnceOnTheFirstNightTheChangeIsSignificant) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 random(seed);
    std::uniform_real_distribution<double> vary(0.85, 1.15);
    std::vector<double> nights;
    for (int n = 1; n <= 12; ++n) nights.push_back((n >= 7 ? 0.28 : 1.0) * 0.31 * vary(random));
    EXPECT_EQ(alarm_nights(nights, of_suite("nightly")), std::vector<int>{9}) << "seed " << seed;
  }
}

TEST(Trend, AChangeStillTooNoisyToTellFiresWhenItBecomesSignificantNotWhenItStarted) {
  // A 12% step in runs that vary 8%: not told with three nights after it. The alarm fires on
  // the first night it is told, however far back the step lies; once.
  std::mt19937_64 random(7);
  std::normal_distribution<double> vary(1.0, 0.08);
  std::vector<double> nights;
  for (int n = 1; n <= 30; ++n) nights.push_back((n >= 11 ? 0.88 : 1.0) * 100 * vary(random));
  const auto fired = alarm_nights(nights, of_suite("nightly"));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_GT(fired[0], 13);
  // The change found then starts near night 11, not at the night the alarm fired.
  TempDb tmp;
  History h = History::open(tmp.path);
  for (int n = 1; n <= fired[0]; ++n)
    h.record(night_of(n, nights[static_cast<std::size_t>(n - 1)]));
  const Trend t = trend(h, of_suite("nightly"));
  const auto alarms = first_found_worse_changes(t);
  ASSERT_EQ(alarms.size(), 1u);
  EXPECT_NEAR(static_cast<double>(alarms[0].change->run), 10, 1);
}

TEST(Trend, ASkippedNightIsCaughtWithRecentTwo) {
  const std::vector<double> nights{96.1, 97.4, 95.8, 97.0, 2.9, 3.1, 2.8, 3.0};
  TempDb tmp;
  History h = History::open(tmp.path);
  for (int n = 1; n <= 8; ++n) h.record(night_of(n, nights[static_cast<std::size_t>(n - 1)]));
  // Found on night 7; a job that did not run that night sees it as new on night 8 only with
  // --recent 2.
  EXPECT_TRUE(first_found_worse_changes(trend(h, of_suite("nightly"))).empty());
  TrendOptions two = of_suite("nightly");
  two.recent = 2;
  EXPECT_EQ(first_found_worse_changes(trend(h, two)).size(), 1u);
}

TEST(Trend, AnUnknownSuiteOrTooFewRunsIsAClearError) {
  TempDb tmp;
  History h = History::open(tmp.path);
  try {
    trend(h, of_suite("nightly"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no run of suite 'nightly'"), std::string::npos);
  }
  EXPECT_THROW(trend(h, of_suite("nightly", 1)), Error);
}

}  // namespace
}  // namespace rocehil::reports
