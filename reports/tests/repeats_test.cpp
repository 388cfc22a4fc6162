#include "rocehil/reports/repeats.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "record_fixture.hpp"

namespace rocehil::reports {
namespace {

TEST(Repeats, TheNumberIsTheMedianOfTheRepeatsWithItsSpread) {
  const RepeatsSummary s = summarize_repeats(testing::five_repeats());
  EXPECT_EQ(s.repeats, 5);
  EXPECT_EQ(s.retries, 0);
  ASSERT_TRUE(s.headline);
  EXPECT_EQ(s.headline->metric, "busbw_gbps");
  EXPECT_DOUBLE_EQ(s.headline->spread.median, 0.31);  // not the last repeat's 0.395
  EXPECT_DOUBLE_EQ(s.headline->spread.low, 0.229);
  EXPECT_DOUBLE_EQ(s.headline->spread.high, 0.395);
  EXPECT_EQ(headline_text(s), "bw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)");
  EXPECT_EQ(repeats_text(s), "5 repeats");
}

TEST(Repeats, AThresholdQuotesTheRepeatThatFailedItTheWorstFirst) {
  const RepeatsSummary s = summarize_repeats(testing::five_repeats("busbw_gbps >= 0.3"));
  ASSERT_EQ(s.thresholds.size(), 1u);
  const ThresholdOverRepeats& t = s.thresholds[0];
  EXPECT_EQ(t.worst.evaluation.verdict, suites::Verdict::fail);
  EXPECT_EQ(t.repeat, 1);  // 0.229: the lowest of the two that failed (0.229, 0.27)
  EXPECT_EQ(t.graded, 5);
  EXPECT_EQ(t.at_verdict, 2);
  EXPECT_EQ(threshold_text(t, s.repeats),
            "busbw_gbps >= 0.3: failed in 2 of 5 repeats; the worst, repeat 2: busbw_gbps = "
            "0.229, needs >= 0.3");
}

// For a limit from above the worst repeat is the highest.
TEST(Repeats, AnUpperLimitsWorstRepeatIsTheHighest) {
  const CaseRecord c = testing::repeated_case(
      "lat", {"lat_p99_us <= 10"},
      {{{{"lat_p99_us", 12}}}, {{{"lat_p99_us", 30}}}, {{{"lat_p99_us", 8}}}}, "lat");
  const RepeatsSummary s = summarize_repeats(c);
  EXPECT_EQ(s.thresholds.at(0).repeat, 1);
  EXPECT_EQ(headline_text(s), "lat p99 12 us, median of 3 repeats (8 to 30)");
  EXPECT_EQ(c.outcome, suites::Outcome::fail);
  // A starved run's milliseconds read as such, never 7.08e+03.
  const CaseRecord slow =
      testing::repeated_case("lat", {"lat_p99_us <= 10"}, {{{{"lat_p99_us", 7083.2}}}}, "lat");
  EXPECT_EQ(headline_text(summarize_repeats(slow)), "lat p99 7083 us");
}

// A passed threshold over repeats names how close its closest repeat came; one repeat is said as
// the threshold's own detail.
TEST(Repeats, APassQuotesTheClosestRepeatAndOneRepeatIsPlain) {
  const RepeatsSummary s = summarize_repeats(testing::five_repeats("busbw_gbps >= 0.2"));
  EXPECT_EQ(threshold_text(s.thresholds.at(0), s.repeats),
            "busbw_gbps >= 0.2: passed in 5 of 5 repeats; the closest, repeat 2: busbw_gbps = "
            "0.229, needs >= 0.2");
  const CaseRecord once =
      testing::repeated_case("p2p_bw", {"busbw_gbps >= 0.5"}, {{{{"busbw_gbps", 0.25}}}}, "bw");
  const RepeatsSummary one = summarize_repeats(once);
  EXPECT_EQ(headline_text(one), "bw 0.25 Gbit/s");
  EXPECT_EQ(threshold_text(one.thresholds.at(0), 1),
            "busbw_gbps >= 0.5: busbw_gbps = 0.25, needs >= 0.5");
  EXPECT_EQ(repeats_text(one), "");
}

// A retry replaces the attempt it retried: the failure it replaced is neither a sample nor
// quoted, and the retry is counted as one, apart from the repeats asked for.
TEST(Repeats, ARetryReplacesWhatItRetriedAndIsCountedApart) {
  const CaseRecord c = testing::repeated_case(
      "p2p_bw", {"busbw_gbps >= 0.3"},
      {{{{"busbw_gbps", 0.1}}, {{"busbw_gbps", 0.4}}}, {{{"busbw_gbps", 0.5}}}}, "bw");
  EXPECT_EQ(final_attempts(c).size(), 2u);
  const RepeatsSummary s = summarize_repeats(c);
  EXPECT_EQ(s.repeats, 2);
  EXPECT_EQ(s.retries, 1);
  EXPECT_DOUBLE_EQ(s.headline->spread.low, 0.4);
  EXPECT_EQ(s.thresholds.at(0).worst.evaluation.verdict, suites::Verdict::pass);
  EXPECT_EQ(repeats_text(s), "2 repeats, 1 retry after a failure");
  EXPECT_EQ(c.outcome, suites::Outcome::pass);
}

// A repeat that measured nothing is named; the others still give the number, said to come from
// fewer repeats than ran.
TEST(Repeats, ARepeatNotMeasuredIsNamedAndLeftOutOfTheNumber) {
  CaseRecord c =
      testing::repeated_case("ring", {"busbw_gbps >= 0.1"},
                             {{{{"busbw_gbps", 1}}}, {{{"busbw_gbps", 2}}}, {{{"busbw_gbps", 4}}}});
  c.attempts[1].grade.reset();
  c.attempts[1].error = AttemptError{"h2", "traffic", "agent died"};
  const RepeatsSummary s = summarize_repeats(c);
  ASSERT_TRUE(s.error);
  EXPECT_EQ(s.error->host, "h2");
  EXPECT_EQ(s.error_repeat, 1);
  EXPECT_EQ(headline_text(s), "busbw 2.5 Gbit/s, median of 2 of 3 repeats (1 to 4)");
  EXPECT_EQ(threshold_text(s.thresholds.at(0), s.repeats),
            "busbw_gbps >= 0.1: passed in 2 of 2 repeats graded; the closest, repeat 1: "
            "busbw_gbps = 1, needs >= 0.1");
}

TEST(Repeats, ASpreadLeavesOutWhatIsNotANumber) {
  EXPECT_FALSE(spread_of({}));
  EXPECT_FALSE(spread_of({std::nan("")}));
  const auto s = spread_of({3, std::nan(""), 1, 2, 10});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->median, 2.5);
  EXPECT_EQ(s->samples, 4u);
}

// A case with parts has no busbw of its own: its number is the first part's (by name) that has
// one, named by the part.
TEST(Repeats, ACaseWithPartsShowsAPartsNumberNamedByIt) {
  const RepeatsSummary s = summarize_repeats(testing::repeated_case(
      "mix", {"roce.busbw_gbps > 0"},
      {{{{"roce.busbw_gbps", 0.21}, {"pair.busbw_gbps", 0.16}, {"ping.lat_p99_us", 40}}}},
      "parts"));
  ASSERT_TRUE(s.headline);
  EXPECT_EQ(s.headline->metric, "pair.busbw_gbps");
  EXPECT_EQ(headline_text(s), "pair busbw 0.16 Gbit/s");
  const RepeatsSummary lat =
      summarize_repeats(testing::repeated_case("mix", {}, {{{{"ping.lat_p99_us", 40}}}}, "parts"));
  ASSERT_TRUE(lat.headline);
  EXPECT_EQ(headline_text(lat), "ping lat p99 40 us");
}

}  // namespace
}  // namespace rocehil::reports
