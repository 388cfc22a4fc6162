// A collective case's numbers as thresholds see them, graded as the orchestrator will.
#include "rocehil/run/case_metrics.hpp"

#include <gtest/gtest.h>

#include "rocehil/suites/grade.hpp"

namespace rocehil::run {
namespace {

CollectiveCase measured_case() {
  CollectiveCase c;
  c.job.plan = {.pattern = traffic::Pattern::ring_allreduce, .ranks = 4, .bytes = 1 << 20};
  c.job.scaling = {.qps = 8, .strategy = traffic::QpStrategy::split};
  c.summary.busbw_gbps = 0.3;
  c.summary.algbw_gbytes_s = 0.025;
  c.summary.time_us = 41943.04;
  c.summary.time_p99_us = 50000;
  c.summary.time_cv = 0.07;
  c.verified = true;
  c.results.resize(4);
  for (auto& r : c.results) {
    r.per_qp.resize(8);
    r.per_qp[2].counters.retransmitted_packets = 3;
    r.per_qp[5].counters.cnps_handled = 10;
  }
  return c;
}

TEST(CaseMetrics, CollectiveNumbersUnderTheirMetricNames) {
  const suites::Values v = collective_metrics(measured_case(), "soft").values;
  EXPECT_DOUBLE_EQ(v.at("busbw_gbps"), 0.3);
  EXPECT_DOUBLE_EQ(v.at("algbw_gbps"), 0.2);
  EXPECT_DOUBLE_EQ(v.at("time_us"), 41943.04);
  EXPECT_DOUBLE_EQ(v.at("retransmits"), 12);
  EXPECT_DOUBLE_EQ(v.at("cnps"), 40);
  EXPECT_DOUBLE_EQ(v.at("data_errors"), 0);
  CollectiveCase unchecked = measured_case();
  unchecked.verified = false;
  EXPECT_EQ(collective_metrics(unchecked, "soft").values.count("data_errors"), 0u);
}

// An incast's senders: each one's bytes over the time its steps took. Two senders at 1 and 3
// Gbit/s while sending: Jain 0.8, deviation 0.5; the receiver sends nothing and is no sender.
TEST(CaseMetrics, AnIncastsFairnessIsItsSendersRatesWhileSending) {
  CollectiveCase c;
  c.job.plan = {.pattern = traffic::Pattern::incast, .ranks = 3, .bytes = 1 << 20};
  c.results.resize(3);
  c.results[0].collective = agent::CollectiveReport{};  // the receiver
  agent::CollectiveReport slow, fast;
  slow.bytes_sent = 1'000'000;  // 8e6 bits over 8 ms: 1 Gbit/s
  slow.step_ns = {5'000'000, 3'000'000};
  fast.bytes_sent = 3'000'000;  // 24e6 bits over 8 ms: 3 Gbit/s
  fast.step_ns = {8'000'000};
  c.results[1].collective = slow;
  c.results[2].collective = fast;
  const suites::Measured m = collective_metrics(c, "soft");
  EXPECT_DOUBLE_EQ(m.values.at("fairness_jain"), 0.8);
  EXPECT_DOUBLE_EQ(m.values.at("rate_deviation"), 0.5);
  c.results[2].collective->step_ns.clear();  // more steps than a rank reports one by one
  const suites::Measured unknown = collective_metrics(c, "soft");
  EXPECT_EQ(unknown.values.count("fairness_jain"), 0u);
  EXPECT_NE(unknown.unmeasured.at("fairness_jain").find("rank 2 reported no per-step times"),
            std::string::npos);
}

TEST(CaseMetrics, NamesComeFromTheCaseAndTheSlowestNic) {
  const suites::Values n =
      collective_names(measured_case(), {"h1", "h1", "h2", "h3"}, {400, 0, 200, 400});
  EXPECT_DOUBLE_EQ(n.at("n"), 4);
  EXPECT_DOUBLE_EQ(n.at("qps"), 8);
  EXPECT_DOUBLE_EQ(n.at("size"), 1 << 20);
  EXPECT_DOUBLE_EQ(n.at("hosts"), 3);
  EXPECT_DOUBLE_EQ(n.at("link_gbps"), 200);
  EXPECT_EQ(collective_names(measured_case(), {}, {0, 0}).count("link_gbps"), 0u);
}

TEST(CaseMetrics, TheSmokeSuitesAllreduceThresholdsGradeACase) {
  std::vector<suites::Threshold> ts;
  for (const char* text : {"busbw_gbps > 0.05 * link_gbps", "data_errors == 0", "retransmits == 0"})
    ts.push_back(*suites::parse_threshold(text).threshold);
  const auto c = measured_case();
  const auto g =
      suites::grade(ts, collective_metrics(c, "soft").values, collective_names(c, {"h1"}, {1.0}));
  ASSERT_EQ(g.results.size(), 3u);
  EXPECT_EQ(g.results[0].evaluation.verdict, suites::Verdict::pass);  // 0.3 > 0.05
  EXPECT_EQ(g.results[1].evaluation.verdict, suites::Verdict::pass);
  EXPECT_EQ(g.results[2].evaluation.verdict, suites::Verdict::fail);  // 12 retransmits
  EXPECT_EQ(g.results[2].evaluation.detail, "retransmits = 12, needs == 0");
  EXPECT_EQ(g.verdict, suites::Verdict::fail);
}

TEST(CaseMetrics, PointToPointBandwidthIsWhatTheReceiverCounted) {
  PointToPointResult r;
  r.client.results.workload = agent::Workload::bw;
  r.client.results.gbps = 0.95;
  r.client.results.bytes = 1000;
  r.client.results.per_qp.resize(2);
  r.client.results.per_qp[1].counters.retransmitted_packets = 4;
  r.server.results.gbps = 0.9;
  r.server.results.bytes = 900;
  r.server.results.per_qp.resize(2);
  r.server.results.per_qp[0].counters.cnps_handled = 0;
  r.client.results.per_qp[0].counters.cnps_handled = 7;
  r.client.results.per_qp[0].gbps = 0.25;
  r.client.results.per_qp[1].gbps = 0.75;
  r.data.checked = true;
  r.data.transfers = 2;
  r.data.intact = 1;
  const auto v = point_to_point_metrics(r, "soft").values;
  EXPECT_EQ(v.at("busbw_gbps"), 0.9);
  EXPECT_DOUBLE_EQ(v.at("fairness_jain"), 0.8);  // the sender's QPs, 1:3
  EXPECT_DOUBLE_EQ(v.at("rate_deviation"), 0.5);
  EXPECT_EQ(v.at("retransmits"), 4);
  EXPECT_EQ(v.at("cnps"), 7);
  EXPECT_EQ(v.at("data_errors"), 1);
  EXPECT_EQ(v.count("lat_p99_us"), 0u);

  r.server.results.bytes = 0;  // nothing counted on the receiving side: the sender's rate
  r.data.checked = false;
  const auto sent = point_to_point_metrics(r, "soft").values;
  EXPECT_EQ(sent.at("busbw_gbps"), 0.95);
  EXPECT_EQ(sent.count("data_errors"), 0u);
}

TEST(CaseMetrics, PointToPointLatencyPercentiles) {
  PointToPointResult r;
  r.client.results.workload = agent::Workload::lat;
  agent::LatencySummary latency;
  latency.samples = 10;
  latency.p50_us = 5;
  latency.p99_us = 9;
  latency.max_us = 12;
  latency.mean_us = 6.5;
  r.client.results.latency = latency;
  const auto v = point_to_point_metrics(r, "soft").values;
  EXPECT_EQ(v.at("lat_avg_us"), 6.5);
  EXPECT_EQ(v.at("lat_p50_us"), 5);
  EXPECT_EQ(v.at("lat_p99_us"), 9);
  EXPECT_EQ(v.at("lat_max_us"), 12);
  EXPECT_EQ(v.count("busbw_gbps"), 0u);
}

// A failing `errors == 0` says what went wrong, each side's first error in its NIC's words, so an
// engineer need not open run.json.
TEST(CaseMetrics, TransportErrorsAreGradedBesideEachSidesFirstError) {
  PointToPointResult r;
  r.client.name = "h1";
  r.server.name = "h2";
  r.client.results.workload = agent::Workload::bw;
  r.client.results.errors = 1;
  r.client.results.first_error =
      "QP 0x13: retry_exceeded (the NIC: transport retry counter exceeded)";
  r.server.results.errors = 2;
  r.server.results.first_error = "QP 0x14: no answer within 10 s";
  const suites::Measured m = point_to_point_metrics(r, "verbs");
  EXPECT_EQ(m.values.at("errors"), 3);
  const auto grade = suites::grade({*suites::parse_threshold("errors == 0").threshold}, m.values,
                                   {}, m.unmeasured, m.where);
  ASSERT_EQ(grade.results.size(), 1u);
  EXPECT_EQ(grade.results[0].evaluation.detail,
            "errors = 3, needs == 0; at h1: QP 0x13: retry_exceeded (the NIC: transport retry "
            "counter exceeded); h2: QP 0x14: no answer within 10 s");
  r.client.results.errors = 0;
  r.server.results.errors = 0;
  EXPECT_EQ(point_to_point_metrics(r, "verbs").where.count("errors"), 0u);  // clean: nothing
}

// On verbs a QP counts completed bytes and nothing else: retransmits, timeouts, NAKs and CNPs are
// absent (never 0), so `retransmits == 0` grades error with the reason and the NIC metric to use.
TEST(CaseMetrics, CountersAVerbsQpCannotMeasureAreAbsentAndGradeError) {
  CollectiveCase c = measured_case();
  for (auto& r : c.results)
    for (auto& q : r.per_qp)
      q.counters.measured = traffic::QpCounters::bit(traffic::QpCounter::bytes_sent) |
                            traffic::QpCounters::bit(traffic::QpCounter::bytes_received);
  const suites::Measured m = collective_metrics(c, "verbs");
  for (const char* metric : {"retransmits", "timeouts", "naks", "cnps"}) {
    EXPECT_EQ(m.values.count(metric), 0u) << metric;
    EXPECT_NE(m.unmeasured.at(metric).find("the verbs provider has no per-QP"), std::string::npos)
        << metric;
  }
  EXPECT_NE(m.unmeasured.at("retransmits").find("use nic_retransmits"), std::string::npos);
  EXPECT_NE(m.unmeasured.at("cnps").find("use nic_cnps_handled"), std::string::npos);
  EXPECT_EQ(m.values.at("busbw_gbps"), 0.3);  // what the agents timed still stands
  std::vector<suites::Threshold> ts{*suites::parse_threshold("retransmits == 0").threshold,
                                    *suites::parse_threshold("cnps > 0").threshold};
  const auto g = suites::grade(ts, m.values, {}, m.unmeasured);
  EXPECT_EQ(g.verdict, suites::Verdict::error);
  EXPECT_EQ(g.results[0].evaluation.verdict, suites::Verdict::error);
  EXPECT_EQ(g.results[1].evaluation.verdict, suites::Verdict::error);
  // One unmeasured QP among measured ones is enough: a partial sum would read low.
  CollectiveCase mixed = measured_case();
  mixed.results[3].per_qp[0].counters.measured &=
      ~traffic::QpCounters::bit(traffic::QpCounter::retransmitted_packets);
  const auto partial = collective_metrics(mixed, "mixed");
  EXPECT_EQ(partial.values.count("retransmits"), 0u);
  EXPECT_EQ(partial.values.at("cnps"), 40);
}

}  // namespace
}  // namespace rocehil::run
