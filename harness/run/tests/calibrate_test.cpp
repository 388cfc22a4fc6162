// rocehil calibrate's suite (what it asks the run to do) and its rows (what it reads back).
#include "rocehil/run/calibrate.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {
namespace {

using nlohmann::json;

CalibrateOptions options() {
  CalibrateOptions o;
  o.hosts = {"gpu01", "gpu02"};
  o.sizes = {4096, 1 << 20};
  o.qps = 4;
  o.rounds = 5;
  o.seconds = 2.5;
  o.bw_tolerance = 0.05;
  o.lat_tolerance = 0.1;
  return o;
}

TEST(Calibrate, TheSuiteIsAnOrdinarySuiteWithBothWorkloadsAndTheirTolerances) {
  const suites::SuiteLoadResult loaded =
      suites::parse_suite(calibration_suite(options()), "c.yaml");
  ASSERT_TRUE(loaded.suite) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
  const suites::Suite& s = *loaded.suite;
  ASSERT_EQ(s.tests.size(), 2u);
  const suites::SuiteTest& bw = s.tests[0];
  EXPECT_EQ(bw.workload, "calibrate_bw");
  EXPECT_EQ(bw.settings.hosts, "gpu01,gpu02");
  EXPECT_EQ(bw.settings.sizes, (std::vector<std::uint64_t>{4096, 1 << 20}));
  EXPECT_EQ(bw.settings.qps, (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(bw.settings.rounds, 5);
  EXPECT_EQ(bw.settings.duration_s, 3);  // whole seconds, as perftest takes them
  ASSERT_EQ(bw.thresholds.size(), 2u);
  EXPECT_EQ(bw.thresholds[0].text, "calibration_ratio >= 0.95");
  EXPECT_EQ(bw.thresholds[1].text, "calibration_ratio <= 1.05");
  const suites::SuiteTest& lat = s.tests[1];
  EXPECT_EQ(lat.workload, "calibrate_lat");
  EXPECT_EQ(lat.settings.sizes, (std::vector<std::uint64_t>{8}));
  EXPECT_EQ(lat.settings.iterations, 10000u);
  EXPECT_EQ(lat.thresholds[0].text, "calibration_ratio >= 0.9");
  EXPECT_EQ(lat.thresholds[1].text, "calibration_ratio <= 1.1");
  EXPECT_EQ(suites::expand(s).size(), 3u);
}

TEST(Calibrate, OptionsNoSuiteCouldHoldAreRefused) {
  CalibrateOptions o = options();
  o.hosts = {"gpu01", "gpu01"};
  EXPECT_THROW(calibration_suite(o), Error);
  o = options();
  o.bw_tolerance = 5;  // meant 5%
  EXPECT_THROW(calibration_suite(o), Error);
  o = options();
  o.bw = o.lat = false;
  EXPECT_THROW(calibration_suite(o), Error);
  o = options();
  o.lat = false;
  const auto loaded = suites::parse_suite(calibration_suite(o), "c.yaml");
  ASSERT_TRUE(loaded.suite);
  EXPECT_EQ(loaded.suite->tests.size(), 1u);
}

json calibration_case(const std::string& workload, double size, const std::string& outcome) {
  return {{"workload", workload},
          {"names", {{"size", size}}},
          {"outcome", outcome},
          {"attempts",
           {{{"error", nullptr},
             {"metrics",
              {{"calibration_rocehil", 90.0},
               {"calibration_perftest", 92.0},
               {"calibration_ratio", 90.0 / 92.0},
               {"calibration_spread", 0.02}}},
             {"grade",
              {{"verdict", outcome},
               {"thresholds",
                {{{"threshold", "calibration_ratio >= 0.99"},
                  {"verdict", outcome},
                  {"detail", "calibration_ratio = 0.978, needs >= 0.99"}}}}}},
             {"raw",
              {{"traffic",
                {{"calibration",
                  {{"rocehil", {89.0, 90.0, 91.0}}, {"perftest", {92.0, 92.0, 93.0}}}}}}}}}}}};
}

TEST(Calibrate, RowsAreReadFromTheRunRecordWithEachRound) {
  json error_case = calibration_case("calibrate_lat", 8, "error");
  error_case["attempts"][0]["error"] = {{"host", "h3"},
                                        {"phase", "perftest"},
                                        {"message", "ib_send_lat on h3: Did not detect devices"}};
  error_case["attempts"][0]["metrics"] = json::object();
  error_case["attempts"][0]["raw"] = json::object();
  const json run = {{"cases",
                     {calibration_case("calibrate_bw", 65536, "fail"),
                      {{"workload", "allreduce"}, {"outcome", "pass"}},
                      error_case}}};
  const auto rows = calibration_rows(run);
  ASSERT_EQ(rows.size(), 2u);  // the allreduce is not a calibration
  EXPECT_EQ(rows[0].workload, "bw");
  EXPECT_EQ(rows[0].unit, "Gbit/s");
  EXPECT_EQ(rows[0].size, 65536u);
  EXPECT_EQ(rows[0].rocehil, (std::vector<double>{89, 90, 91}));
  EXPECT_EQ(rows[0].perftest, (std::vector<double>{92, 92, 93}));
  EXPECT_EQ(rows[0].ratio, 90.0 / 92.0);
  EXPECT_EQ(rows[0].outcome, "fail");
  EXPECT_EQ(rows[0].detail, "calibration_ratio = 0.978, needs >= 0.99");
  EXPECT_EQ(rows[1].workload, "lat");
  EXPECT_FALSE(rows[1].ratio);  // not measured: absent, not 0
  EXPECT_TRUE(rows[1].rocehil.empty());
  EXPECT_EQ(rows[1].detail, "h3: perftest: ib_send_lat on h3: Did not detect devices");
}

}  // namespace
}  // namespace rocehil::run
