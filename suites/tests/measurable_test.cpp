// A threshold on a metric the test can never measure is refused when the suite is read, at the
// threshold's own line and column, with what the test does measure.
#include "rocehil/suites/measurable.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "rocehil/suites/metrics.hpp"
#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

using testing::errors_of;

std::string suite_with(std::string_view test) {
  return "schema_version: 1\nname: s\ntests:\n" + std::string(test);
}

TEST(Measurable, ALatencyThresholdOnABandwidthTestIsRefusedAtItsColumn) {
  const auto errors = errors_of(suite_with(R"(  - name: bw
    workload: bw
    hosts: h1,h3
    thresholds:
      - busbw_gbps > 0
      - lat_p99_us <= 10
)"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "s.yaml:9:9: test 'bw': threshold 'lat_p99_us <= 10': workload bw never measures "
            "lat_p99_us; this test measures busbw_gbps, algbw_gbps, fairness_jain, "
            "rate_deviation, retransmits, timeouts, naks, errors, data_errors, cnps, "
            "max_stall_ms, cnp_per_s (and the NICs' nic_* and switches' switch_* counters where "
            "they count them)");
}

// A limit that compares with another metric needs that one measured too: "few or no PFC" beside
// the CNPs means nothing without a capture to count the CNPs.
TEST(Measurable, AMetricTheLimitNamesIsHeldToTheTestAsTheLeftSideIs) {
  const auto errors = errors_of(suite_with(R"(  - name: bw
    workload: bw
    hosts: h1,h3
    thresholds:
      - busbw_gbps >= 0.5 * lat_p99_us
      - nic_rx_pause[3] <= 0.1 * mirror_cnps[dscp=48]
)"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("s.yaml:8:9: test 'bw': threshold 'busbw_gbps >= 0.5 * lat_p99_us': "
                           "workload bw never measures lat_p99_us"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("s.yaml:9:9: test 'bw': threshold 'nic_rx_pause[3] <= 0.1 * "
                           "mirror_cnps[dscp=48]': mirror_cnps comes from capture points"),
            std::string::npos)
      << errors[1];
  const SuiteLoadResult captured = parse_suite(suite_with(R"(  - name: bw
    workload: bw
    hosts: h1,h3
    captures: [s1-mirror]
    thresholds: ['pfc_frames[prio=3] <= 0.1 * mirror_cnps', 'ecn_marked[dscp=26] > 0']
)"),
                                               "s.yaml");
  EXPECT_TRUE(captured.suite.has_value());
}

// Stalls come from bw senders' timelines; a recovery needs an event to recover from.
TEST(Measurable, StallsNeedABwSenderAndRecoveriesAnEvent) {
  const auto no_events = errors_of(suite_with(R"(  - name: bw
    workload: bw
    hosts: h1,h3
    thresholds: ['max_stall_ms < 100', 'recovery_ms < 500']
)"));
  ASSERT_EQ(no_events.size(), 1u);
  EXPECT_NE(no_events[0].find("threshold 'recovery_ms < 500': recovery_ms is the time back to "
                              "the rate before a fabric event, and the test has no `events:`"),
            std::string::npos)
      << no_events[0];
  const auto collective = errors_of(suite_with(R"(  - name: ar
    workload: allreduce
    thresholds: ['max_stall_ms < 100']
)"));
  ASSERT_EQ(collective.size(), 1u);
  EXPECT_NE(collective[0].find("max_stall_ms is read from bw senders' timelines (engine "
                               "rocehil), and the test runs none"),
            std::string::npos)
      << collective[0];
  const SuiteLoadResult flap = parse_suite(suite_with(R"(  - name: flap
    workload: bw
    hosts: h1,h3
    duration_s: 6
    events: [{at_s: 2, action: link_down, link: l1-s1}, {at_s: 4, action: link_up, link: l1-s1}]
    thresholds: ['max_stall_ms < 1000', 'recovery_ms < 2000']
)"),
                                           "s.yaml");
  EXPECT_TRUE(flap.suite.has_value());
}

TEST(Measurable, CaptureMetricsNeedCapturesAndImbalanceNeedsTwo) {
  const auto none = errors_of(suite_with(R"(  - name: ar
    workload: allreduce
    thresholds: [{check: "pfc_storms == 0", level: warn}]
)"));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("pfc_storms comes from capture points and the test names none in "
                         "`captures:`"),
            std::string::npos)
      << none[0];
  const auto one = errors_of(suite_with(R"(  - name: ar
    workload: allreduce
    captures: [s1-mirror]
    thresholds: ['ecmp_imbalance <= 1.5', 'pfc_storms == 0']
)"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].find("ecmp_imbalance compares two or more capture points"), std::string::npos);
  EXPECT_NE(one[0].find("pfc_storms"), std::string::npos);  // in the list of what it measures
  const SuiteLoadResult two = parse_suite(suite_with(R"(  - name: ar
    workload: allreduce
    captures: [s1-mirror, s2-mirror]
    thresholds: ['ecmp_imbalance <= 1.5', 'nic_cnps_sent >= 0', 'switch_drops == 0']
)"),
                                          "s.yaml");
  EXPECT_TRUE(two.suite.has_value());  // nic_* and switch_*: the hosts and switches decide
}

// What `rocehil run` refused after validate had passed (issue 61): data_errors on an incast,
// whose receiver has no single right answer, and a nic_* metric on a test whose file says
// `provider: soft`, known without any inventory.
TEST(Measurable, AnIncastChecksNoDataAndASoftTestNoNicCounters) {
  const auto incast = errors_of(suite_with(R"(  - name: in
    workload: incast
    thresholds: ['busbw_gbps > 0', 'data_errors == 0']
)"));
  ASSERT_EQ(incast.size(), 1u);
  EXPECT_NE(incast[0].find("s.yaml:6:37: test 'in': threshold 'data_errors == 0': an incast's "
                           "senders all write into the receiver's one buffer at once"),
            std::string::npos)
      << incast[0];
  const auto soft = errors_of(R"(schema_version: 1
name: s
defaults: {provider: soft}
tests:
  - name: bw
    workload: bw
    thresholds: ['busbw_gbps > 0', 'nic_cnps_sent >= 0']
)");
  ASSERT_EQ(soft.size(), 1u);
  EXPECT_NE(soft[0].find("s.yaml:7:37: test 'bw': threshold 'nic_cnps_sent >= 0': the soft "
                         "provider never measures nic_cnps_sent"),
            std::string::npos)
      << soft[0];
  EXPECT_NE(soft[0].find("(the test's provider: soft)"), std::string::npos) << soft[0];
  // Without a provider in the file, the inventory's hosts decide (suite validate -i, run).
  const SuiteLoadResult undecided = parse_suite(suite_with(R"(  - name: bw
    workload: bw
    thresholds: ['nic_cnps_sent >= 0']
)"),
                                                "s.yaml");
  EXPECT_TRUE(undecided.suite.has_value());
}

TEST(Measurable, ThePerftestEngineChecksNoDataAndCountsNothingPerQp) {
  const auto errors = errors_of(suite_with(R"(  - name: pb
    workload: bw
    engine: perftest
    thresholds: ['perftest_msg_rate_mpps > 0', 'data_errors == 0', 'retransmits == 0']
)"));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("workload bw with engine perftest never measures data_errors"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[1].find("never measures retransmits"), std::string::npos);
}

// Every workload measures what the harness fills in for it (harness/run/src/case_metrics.cpp,
// perftest_pair.cpp, point_to_point_case.cpp); held here so the two lists do not drift apart
// silently: each listed metric is a known one, and each workload's headline metric is there.
TEST(Measurable, EachWorkloadsListNamesKnownMetricsAndItsHeadline) {
  const auto measures = [](std::string workload, std::string engine, std::string metric) {
    SuiteTest t;
    t.workload = std::move(workload);
    t.settings.engine = std::move(engine);
    const auto list = metrics_of_test(t);
    for (const auto m : list) EXPECT_NE(find_metric(m), nullptr) << m;
    return std::find(list.begin(), list.end(), metric) != list.end();
  };
  EXPECT_TRUE(measures("bw", "rocehil", "busbw_gbps"));
  EXPECT_FALSE(measures("bw", "rocehil", "time_us"));
  EXPECT_TRUE(measures("lat", "rocehil", "lat_p99_us"));
  EXPECT_FALSE(measures("lat", "rocehil", "data_errors"));
  EXPECT_TRUE(measures("allreduce", "rocehil", "time_cv"));
  EXPECT_TRUE(measures("incast", "rocehil", "cnps"));
  EXPECT_TRUE(measures("lat", "perftest", "perftest_t_p999_us"));
  EXPECT_TRUE(measures("calibrate_bw", "rocehil", "calibration_ratio"));
  EXPECT_FALSE(measures("calibrate_bw", "rocehil", "busbw_gbps"));
}

TEST(Measurable, TheProviderColumnsSayWhatNeverComes) {
  EXPECT_EQ(never_measured_on("soft", "nic_cnps_sent"),
            "the soft provider never measures nic_cnps_sent: not measured (soft uses no RDMA "
            "device)");
  EXPECT_FALSE(never_measured_on("soft", "nic_tx_bytes"));  // the netdev's own statistics
  EXPECT_NE(never_measured_on("verbs", "retransmits")->find("use nic_retransmits"),
            std::string::npos);
  EXPECT_FALSE(never_measured_on("verbs", "nic_cnps_sent"));
  EXPECT_FALSE(never_measured_on("soft", "retransmits"));
  EXPECT_FALSE(never_measured_on("soft", "calibration_ratio"));  // the host's RDMA device decides
}

TEST(Measurable, ABaselineIsNamedInTheSuiteOrNotAtAll) {
  const SuiteLoadResult r = parse_suite(R"(schema_version: 1
name: s
baseline: last-qualified
tests:
  - name: ar
    workload: allreduce
    thresholds: ['busbw_gbps >= 0.95 * baseline.busbw_gbps', 'busbw_gbps > 0']
)",
                                        "s.yaml");
  ASSERT_TRUE(r.suite.has_value());
  EXPECT_EQ(r.suite->baseline, "last-qualified");
  EXPECT_TRUE(uses_baseline(r.suite->tests[0].thresholds[0]));
  EXPECT_FALSE(uses_baseline(r.suite->tests[0].thresholds[1]));
  EXPECT_EQ(r.suite->tests[0].thresholds[0].line, 7);
  const auto errors = errors_of(R"(schema_version: 1
name: s
baseline: "the best one"
tests:
  - {name: ar, workload: allreduce}
)");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("s.yaml:3:11: baseline 'the best one' is neither 'last-qualified' nor "
                           "a run id"),
            std::string::npos)
      << errors[0];
}

}  // namespace
}  // namespace rocehil::suites
