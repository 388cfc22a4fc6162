#include "rocehil/suites/threshold.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace rocehil::suites {
namespace {

Threshold parsed_threshold(std::string_view text) {
  const ParsedThreshold p = parse_threshold(text);
  EXPECT_TRUE(p.threshold.has_value()) << text << ": " << p.error;
  return p.threshold.value_or(Threshold{});
}

double limit_of(std::string_view text, const Values& names = {}) {
  std::string why;
  const auto v = evaluate(parsed_threshold(text).limit, names, why);
  EXPECT_TRUE(v.has_value()) << why;
  return v.value_or(NAN);
}

TEST(Threshold, ParsesTheIssuesExamples) {
  const Threshold t = parsed_threshold("busbw_gbps >= 0.9 * link_gbps");
  EXPECT_EQ(t.metric.key(), "busbw_gbps");
  EXPECT_EQ(t.op, Comparison::ge);
  EXPECT_DOUBLE_EQ(limit_of("busbw_gbps >= 0.9 * link_gbps", {{"link_gbps", 400}}), 360);
  EXPECT_EQ(parsed_threshold("lat_p99_us <= 8").op, Comparison::le);
  EXPECT_EQ(parsed_threshold("cnp_per_s <= 5000").metric.name, "cnp_per_s");
  const Threshold pfc = parsed_threshold("pfc_pause_fraction[3] <= 0.01");
  EXPECT_EQ(pfc.metric.key(), "pfc_pause_fraction[3]");
  EXPECT_EQ(pfc.metric.index, 3);
  EXPECT_EQ(parsed_threshold("pfc_storms == 0").op, Comparison::eq);
  EXPECT_EQ(parsed_threshold("retransmits == 0").metric.name, "retransmits");
  EXPECT_EQ(parsed_threshold("ecmp_imbalance <= 1.2").op, Comparison::le);
  EXPECT_EQ(parsed_threshold("capture_coverage >= 0.99").op, Comparison::ge);
  EXPECT_DOUBLE_EQ(
      limit_of("busbw_gbps >= 0.95 * baseline.busbw_gbps", {{"baseline.busbw_gbps", 200}}), 190);
}

TEST(Threshold, ArithmeticFollowsPrecedenceAndParentheses) {
  EXPECT_DOUBLE_EQ(limit_of("time_us < 1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(limit_of("time_us < (1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(limit_of("time_us < 8 / 4 / 2"), 1);
  EXPECT_DOUBLE_EQ(limit_of("time_us < 10 - 4 - 3"), 3);
  EXPECT_DOUBLE_EQ(limit_of("time_us > -2 * -3"), 6);
  EXPECT_DOUBLE_EQ(limit_of("time_us > 1.5e3"), 1500);
  EXPECT_DOUBLE_EQ(limit_of("busbw_gbps>=2*(n-1)/n*link_gbps", {{"n", 4}, {"link_gbps", 100}}),
                   150);
}

TEST(Threshold, ErrorsNameTheColumnAndTheFix) {
  auto error_of = [](std::string_view text) { return parse_threshold(text).error; };
  EXPECT_EQ(error_of("busbw_gpbs >= 1"),
            "column 1: unknown metric 'busbw_gpbs' (did you mean 'busbw_gbps'?)");
  EXPECT_EQ(error_of("busbw_gbps >= 0.9 * link_gbs"),
            "column 21: unknown name 'link_gbs' (did you mean 'link_gbps'?)");
  EXPECT_EQ(error_of("busbw_gbps >= baseline.busbw_gbs"),
            "column 15: 'baseline.busbw_gbs' names no metric (did you mean "
            "'baseline.busbw_gbps'?)");
  EXPECT_EQ(error_of("busbw_gbps => 1"),
            "column 12: expected a comparison: <, <=, >, >=, == or !=");
  EXPECT_EQ(error_of("busbw_gbps >= (1 + 2"), "column 21: missing ')'");
  EXPECT_EQ(error_of("busbw_gbps >="), "column 14: the expression ends too early");
  EXPECT_EQ(error_of("busbw_gbps >= 1 2"), "column 17: unexpected '2' after the expression");
  EXPECT_EQ(error_of("pfc_pause_fraction <= 0.1"),
            "column 19: 'pfc_pause_fraction' needs a priority, as in pfc_pause_fraction[3]");
  EXPECT_EQ(error_of("pfc_pause_fraction[8] <= 0.1"),
            "column 20: 'pfc_pause_fraction[...]' takes a priority from 0 to 7, as in "
            "pfc_pause_fraction[3]");
  EXPECT_EQ(error_of("retransmits[1] == 0"), "column 1: 'retransmits' takes no [index]");
  EXPECT_EQ(error_of(">= 3"),
            "column 1: a threshold starts with a metric, as in 'busbw_gbps >= 0.9 * link_gbps'");
  EXPECT_EQ(error_of("time_us < $x"), "column 11: unexpected '$'");
  EXPECT_EQ(parse_threshold("busbw_gbps >= 0.9 * link_gbs").column, 21);
  // A user's bytes come back escaped: every message stays one printable line.
  EXPECT_EQ(error_of(std::string("time_us < 1\x1d\0x", 14)),
            "column 12: unexpected '\\x1d\\x00x' after the expression");
  EXPECT_EQ(error_of("time_us < \x7f"), "column 11: unexpected '\\x7f'");
  EXPECT_EQ(error_of("time_us < " + std::string(40, '(') + "1" + std::string(40, ')')),
            "column 43: the expression nests too deep");
}

TEST(Threshold, EvaluationSaysPassFailWarnOrWhyItCannot) {
  const Values measured{{"busbw_gbps", 350}, {"pfc_pause_fraction[3]", 0.02}};
  const Values names{{"link_gbps", 400}};
  const Evaluation pass =
      evaluate(parsed_threshold("busbw_gbps >= 0.8 * link_gbps"), measured, names);
  EXPECT_EQ(pass.verdict, Verdict::pass);
  EXPECT_EQ(pass.measured, 350);
  EXPECT_EQ(pass.limit, 320);
  EXPECT_EQ(pass.detail, "busbw_gbps = 350, needs >= 320");
  EXPECT_EQ(evaluate(parsed_threshold("busbw_gbps >= 0.9 * link_gbps"), measured, names).verdict,
            Verdict::fail);
  Threshold warn = parsed_threshold("pfc_pause_fraction[3] <= 0.01");
  warn.level = Level::warn;
  EXPECT_EQ(evaluate(warn, measured, names).verdict, Verdict::warn);
  // Four significant digits, not a histogram bucket edge's false precision; more only where
  // four would show a failing value equal to its limit.
  const Values latency{{"lat_p50_us", 3276.799}, {"busbw_gbps", 0.29996}};
  EXPECT_EQ(evaluate(parsed_threshold("lat_p50_us <= 5000"), latency, names).detail,
            "lat_p50_us = 3277, needs <= 5,000");
  EXPECT_EQ(evaluate(parsed_threshold("busbw_gbps >= 0.3"), latency, names).detail,
            "busbw_gbps = 0.29996, needs >= 0.3");
  const Evaluation missing = evaluate(parsed_threshold("retransmits == 0"), measured, names);
  EXPECT_EQ(missing.verdict, Verdict::error);
  EXPECT_EQ(missing.detail, "retransmits was not measured by this test");
  const Evaluation no_baseline =
      evaluate(parsed_threshold("busbw_gbps >= 0.9 * baseline.busbw_gbps"), measured, names);
  EXPECT_EQ(no_baseline.verdict, Verdict::error);
  EXPECT_EQ(no_baseline.detail,
            "busbw_gbps >= 0.9 * baseline.busbw_gbps: no baseline value for busbw_gbps (the "
            "baseline run did not measure it in this case)");
  EXPECT_EQ(evaluate(parsed_threshold("busbw_gbps >= 1 / (n - n)"), measured, {{"n", 2}}).detail,
            "busbw_gbps >= 1 / (n - n): division by zero");
  // Every comparison, at its edge.
  const Values v{{"time_us", 5}};
  EXPECT_EQ(evaluate(parsed_threshold("time_us < 5"), v, {}).verdict, Verdict::fail);
  EXPECT_EQ(evaluate(parsed_threshold("time_us <= 5"), v, {}).verdict, Verdict::pass);
  EXPECT_EQ(evaluate(parsed_threshold("time_us > 5"), v, {}).verdict, Verdict::fail);
  EXPECT_EQ(evaluate(parsed_threshold("time_us >= 5"), v, {}).verdict, Verdict::pass);
  EXPECT_EQ(evaluate(parsed_threshold("time_us == 5"), v, {}).verdict, Verdict::pass);
  EXPECT_EQ(evaluate(parsed_threshold("time_us != 5"), v, {}).verdict, Verdict::fail);
}

// The plan's per-queue expectations: a priority as [3] or [prio=3] (one key), a DSCP as
// [dscp=26]; each metric takes the kind of index its sources count by, and says which.
TEST(Threshold, ClassesAreIndexedByPriorityOrByDscp) {
  EXPECT_EQ(parsed_threshold("switch_pfc_tx[prio=3] > 0").metric.key(), "switch_pfc_tx[3]");
  EXPECT_EQ(parsed_threshold("switch_pfc_tx[3] > 0").metric.key(), "switch_pfc_tx[3]");
  const Threshold ce = parsed_threshold("ecn_marked[dscp=26] > 0");
  EXPECT_EQ(ce.metric.key(), "ecn_marked[dscp=26]");
  EXPECT_TRUE(ce.metric.by_dscp);
  EXPECT_EQ(ce.metric.index, 26);
  EXPECT_EQ(parsed_threshold("ecn_marked > 0").metric.key(), "ecn_marked");
  EXPECT_EQ(parsed_threshold("mirror_cnps[dscp=48] > 0").metric.key(), "mirror_cnps[dscp=48]");
  EXPECT_EQ(parsed_threshold("mirror_acks[dscp=46] > 0").metric.key(), "mirror_acks[dscp=46]");
  EXPECT_EQ(parsed_threshold("pfc_frames[prio=4] > 0").metric.key(), "pfc_frames[4]");
  EXPECT_EQ(parsed_threshold("pfc_frames > 0").metric.key(), "pfc_frames");
  const auto error_of = [](std::string_view text) { return parse_threshold(text).error; };
  EXPECT_EQ(error_of("ecn_marked[3] > 0"),
            "column 1: 'ecn_marked' is counted by the DSCP a mirror port sees, not by priority: "
            "ecn_marked[dscp=26]");
  EXPECT_EQ(error_of("switch_pfc_tx[dscp=26] > 0"),
            "column 1: 'switch_pfc_tx' is counted by priority, not by DSCP: switch_pfc_tx[prio=3]");
  EXPECT_EQ(error_of("ecn_marked[dscp=64] > 0"),
            "column 17: 'ecn_marked[dscp=...]' takes a DSCP from 0 to 63, as in "
            "ecn_marked[dscp=26]");
  EXPECT_EQ(error_of("pfc_frames[prio=9] > 0"),
            "column 17: 'pfc_frames[...]' takes a priority from 0 to 7, as in pfc_frames[3]");
  EXPECT_EQ(error_of("busbw_gbps[dscp=26] > 0"), "column 1: 'busbw_gbps' takes no [index]");
}

// A DSCP the captures saw nothing of counted 0 there (a capture counts every class); a metric
// the captures could not count stays an error with its reason.
TEST(Threshold, ADscpNoFrameCarriedIsZeroWhereTheMetricWasCounted) {
  const Values measured{{"ecn_marked", 7}, {"ecn_marked[dscp=26]", 7}};
  const Evaluation seen = evaluate(parsed_threshold("ecn_marked[dscp=26] == 7"), measured, {});
  EXPECT_EQ(seen.verdict, Verdict::pass);
  const Evaluation none = evaluate(parsed_threshold("ecn_marked[dscp=3] == 0"), measured, {});
  EXPECT_EQ(none.verdict, Verdict::pass) << none.detail;
  EXPECT_EQ(none.measured, 0);
  const Unmeasured why{{"mirror_cnps", "no capture ran beside this test"}};
  const Evaluation absent =
      evaluate(parsed_threshold("mirror_cnps[dscp=48] > 0"), measured, {}, why);
  EXPECT_EQ(absent.verdict, Verdict::error);
  EXPECT_EQ(absent.detail,
            "mirror_cnps[dscp=48] was not measured: no capture ran beside this test");
  // A priority is never made up: only a DSCP is.
  EXPECT_EQ(evaluate(parsed_threshold("switch_pfc_tx[3] == 0"), {{"switch_pfc_tx", 1}}, {}).verdict,
            Verdict::error);
}

// "Few or no PFC" next to CNPs: the limit names other metrics of the same case, indexed as the
// left side is, and this run's baseline's.
TEST(Threshold, ALimitMayNameOtherMetricsOfTheCase) {
  const Values measured{{"pfc_frames", 30},
                        {"mirror_cnps", 1000},
                        {"switch_pfc_tx[3]", 40},
                        {"ecn_marked", 500},
                        {"ecn_marked[dscp=26]", 500}};
  const Evaluation few =
      evaluate(parsed_threshold("pfc_frames <= 0.1 * mirror_cnps"), measured, {});
  EXPECT_EQ(few.verdict, Verdict::pass);
  EXPECT_EQ(few.limit, 100);
  EXPECT_EQ(evaluate(parsed_threshold("pfc_frames <= 0.01 * mirror_cnps"), measured, {}).verdict,
            Verdict::fail);
  EXPECT_EQ(evaluate(parsed_threshold("pfc_frames <= switch_pfc_tx[prio=3]"), measured, {}).limit,
            40);
  EXPECT_EQ(evaluate(parsed_threshold("mirror_cnps >= ecn_marked[dscp=26] + ecn_marked[dscp=0]"),
                     measured, {})
                .limit,
            500);
  const Evaluation missing =
      evaluate(parsed_threshold("pfc_frames <= 0.1 * nic_cnps_sent"), measured, {},
               {{"nic_cnps_sent", "not measured (soft uses no RDMA device)"}});
  EXPECT_EQ(missing.verdict, Verdict::error);
  EXPECT_EQ(missing.detail,
            "pfc_frames <= 0.1 * nic_cnps_sent: nic_cnps_sent was not measured: not measured "
            "(soft uses no RDMA device)");
  // An indexed baseline is keyed as the run's own metric is.
  const Threshold b = parsed_threshold("switch_pfc_tx[prio=3] <= 2 * baseline.switch_pfc_tx[3]");
  EXPECT_EQ(evaluate(b, measured, {{"baseline.switch_pfc_tx[3]", 25}}).limit, 50);
  EXPECT_EQ(parse_threshold("busbw_gbps >= baseline.switch_pfc_tx").error,
            "column 37: 'switch_pfc_tx' needs a priority, as in switch_pfc_tx[3]");
  EXPECT_EQ(parse_threshold("busbw_gbps >= mirror_cnp").error,
            "column 15: unknown name 'mirror_cnp' (did you mean 'mirror_cnps'?)");
}

TEST(Threshold, AnUnmeasuredMetricIsAnErrorWithItsReasonNeverAZero) {
  const Values measured{{"busbw_gbps", 350}};
  const Unmeasured why{{"retransmits", "the verbs provider has no per-QP counters"},
                       {"nic_rx_pause", "h1 mlx5_0 has no ethtool counter rx_prio3_pause"}};
  const Evaluation retransmits = evaluate(parsed_threshold("retransmits == 0"), measured, {}, why);
  EXPECT_EQ(retransmits.verdict, Verdict::error);
  EXPECT_FALSE(retransmits.measured.has_value());
  EXPECT_EQ(retransmits.detail,
            "retransmits was not measured: the verbs provider has no per-QP counters");
  // An indexed metric finds the reason given for its name, or for its own index first.
  EXPECT_EQ(evaluate(parsed_threshold("nic_rx_pause[3] == 0"), measured, {}, why).detail,
            "nic_rx_pause[3] was not measured: h1 mlx5_0 has no ethtool counter rx_prio3_pause");
  Unmeasured by_index = why;
  by_index["nic_rx_pause[3]"] = "index 3's own reason";
  EXPECT_EQ(evaluate(parsed_threshold("nic_rx_pause[3] == 0"), measured, {}, by_index).detail,
            "nic_rx_pause[3] was not measured: index 3's own reason");
  // A value outranks a stale reason: what was measured is graded.
  EXPECT_EQ(
      evaluate(parsed_threshold("busbw_gbps > 1"), measured, {}, {{"busbw_gbps", "stale"}}).verdict,
      Verdict::pass);
}

}  // namespace
}  // namespace rocehil::suites
