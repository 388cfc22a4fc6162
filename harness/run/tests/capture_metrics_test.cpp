#include "rocehil/run/capture_metrics.hpp"

#include <gtest/gtest.h>

#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::run {
namespace {

// One capture point's summary, its analysis written by the capture module's own JSON writer.
agent::CaptureSummaryEvent point(double roce_bytes, std::uint64_t cnps, std::uint64_t ce,
                                 int storms, double pause3, double coverage) {
  capture::Analysis a;
  a.roce.bytes = static_cast<std::uint64_t>(roce_bytes);
  a.roce.ecn_ce = ce;
  a.cnp.count = cnps;
  a.pfc.frames = static_cast<std::uint64_t>(storms) * 100;
  for (int i = 0; i < storms; ++i) a.pfc.storms.push_back({.priority = 3});
  a.pfc.priorities[3].pause_fraction = pause3;
  agent::CaptureSummaryEvent s;
  s.iface = "m1";
  s.coverage = coverage;
  s.analysis_json = capture::to_json_text(a);
  return s;
}

TEST(CaptureMetrics, SumsCountsAndTakesTheWorstPointForFractionsAndCoverage) {
  const auto v =
      capture_metrics({point(3000, 4, 10, 1, 0.25, 0.99), point(1000, 2, 5, 0, 0, 1)}).values;
  EXPECT_EQ(v.at("mirror_cnps"), 6);
  EXPECT_EQ(v.at("ecn_marked"), 15);
  EXPECT_EQ(v.at("pfc_storms"), 1);
  EXPECT_EQ(v.at("pfc_frames"), 100);
  EXPECT_EQ(v.at("pfc_pause_fraction[3]"), 0.25);
  EXPECT_EQ(v.at("pfc_pause_fraction[0]"), 0);
  EXPECT_EQ(v.at("capture_coverage"), 0.99);
  // 3000 of a mean of 2000 bytes: one spine carried half again its share.
  EXPECT_DOUBLE_EQ(v.at("ecmp_imbalance"), 1.5);
}

TEST(CaptureMetrics, OnePointMeasuresNoImbalanceAndNoPointMeasuresNothing) {
  const auto one = capture_metrics({point(3000, 0, 0, 0, 0, 1)});
  EXPECT_EQ(one.values.count("ecmp_imbalance"), 0u);
  EXPECT_NE(one.unmeasured.at("ecmp_imbalance").find("this test has one"), std::string::npos);
  EXPECT_EQ(one.values.at("pfc_storms"), 0);
  const auto none = capture_metrics({});
  EXPECT_TRUE(none.values.empty());
  EXPECT_NE(none.unmeasured.at("mirror_cnps").find("no capture ran beside this test"),
            std::string::npos);
  EXPECT_EQ(none.unmeasured.count("pfc_pause_fraction"), 1u);  // every [priority]
}

// A filter that keeps only CNP and PFC frames sees no data: its 0 CE marks and 0 bytes are not
// measurements, while its CNP and PFC counts are.
TEST(CaptureMetrics, TheCnpPfcFilterMeasuresNoDataFrames) {
  agent::CaptureSummaryEvent a = point(0, 4, 0, 0, 0, 1), b = point(0, 2, 0, 0, 0, 1);
  a.filter = b.filter = "cnp-pfc";
  const auto m = capture_metrics({a, b});
  EXPECT_EQ(m.values.at("mirror_cnps"), 6);
  EXPECT_EQ(m.values.count("ecn_marked"), 0u);
  EXPECT_EQ(m.values.count("ecmp_imbalance"), 0u);
  EXPECT_NE(m.unmeasured.at("ecn_marked").find("filter 'cnp-pfc'"), std::string::npos);
  EXPECT_NE(m.unmeasured.at("mirror_acks").find("filter 'cnp-pfc'"), std::string::npos);
  EXPECT_EQ(m.values.count("mirror_packets"), 0u);
}

// The plan's per-queue expectations: CE on the data's DSCP, CNPs and ACKs on their own, summed
// over the points; PFC frames by priority. Only the DSCPs seen are keyed.
TEST(CaptureMetrics, CountsEachClassOverEveryPoint) {
  agent::CaptureSummaryEvent a = point(3000, 3, 10, 0, 0, 1), b = point(1000, 1, 5, 0, 0, 1);
  capture::Analysis x, y;
  x.roce.packets = 20;
  x.roce.acks = 4;
  x.roce.by_dscp[26] = {.packets = 13, .ecn_ce = 10};
  x.roce.by_dscp[48] = {.packets = 3, .cnps = 3};
  x.roce.by_dscp[46] = {.packets = 4, .acks = 4};
  x.pfc.priorities[3].frames = 7;
  y.roce.packets = 8;
  y.roce.naks = 1;
  y.roce.by_dscp[26] = {.packets = 6, .ecn_ce = 5};
  y.roce.by_dscp[48] = {.packets = 1, .cnps = 1};
  y.roce.by_dscp[46] = {.packets = 1, .naks = 1};
  y.pfc.priorities[3].frames = 2;
  y.pfc.priorities[4].frames = 1;
  a.analysis_json = capture::to_json_text(x);
  b.analysis_json = capture::to_json_text(y);
  const auto v = capture_metrics({a, b}).values;
  EXPECT_EQ(v.at("ecn_marked[dscp=26]"), 15);
  EXPECT_EQ(v.at("mirror_cnps[dscp=48]"), 4);
  EXPECT_EQ(v.at("mirror_acks[dscp=46]"), 4);
  EXPECT_EQ(v.at("mirror_naks[dscp=46]"), 1);
  EXPECT_EQ(v.at("mirror_packets[dscp=26]"), 19);
  EXPECT_EQ(v.at("mirror_packets"), 28);
  EXPECT_EQ(v.at("mirror_acks"), 4);
  EXPECT_EQ(v.at("mirror_naks"), 1);
  EXPECT_EQ(v.at("pfc_frames[3]"), 9);
  EXPECT_EQ(v.at("pfc_frames[4]"), 1);
  EXPECT_EQ(v.at("pfc_frames[0]"), 0);
  EXPECT_EQ(v.count("ecn_marked[dscp=48]"), 0u);  // none there: a threshold reads 0
  EXPECT_EQ(v.count("mirror_packets[dscp=0]"), 0u);
}

TEST(CaptureMetrics, AnAnalysisThatIsNotTheSchemaIsAnInfrastructureError) {
  agent::CaptureSummaryEvent s;
  s.iface = "m1";
  s.analysis_json = "{\"schema_version\": 1}";
  try {
    capture_metrics({s});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find("capture on m1: its analysis cannot be read"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace rocehil::run
