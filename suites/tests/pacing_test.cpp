// `rate:` taken by the workloads that pace their sender (bw, either engine) and refused, with
// the reason, by the others.
#include "rocehil/suites/pacing.hpp"

#include <gtest/gtest.h>

#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

std::string pacing_suite(const std::string& test) {
  return "schema_version: 1\nname: x\ntests:\n  - name: t\n" + test;
}

TEST(Pacing, BwTakesARateWithEitherEngine) {
  for (const char* engine : {"rocehil", "perftest"}) {
    const SuiteLoadResult r = parse_suite(
        pacing_suite(std::string("    workload: bw\n    engine: ") + engine + "\n    rate: 55%\n"),
        "s.yaml");
    ASSERT_TRUE(r.suite) << engine << ": "
                         << (r.diagnostics.empty() ? "" : inventory::to_string(r.diagnostics[0]));
    const TestSettings& s = r.suite->tests.at(0).settings;
    ASSERT_TRUE(s.rate);
    EXPECT_TRUE(s.rate->percent);
    EXPECT_DOUBLE_EQ(s.rate->bits_per_s(100e9), 55e9);
    EXPECT_EQ(s.rate_where.line, 7);
    EXPECT_EQ(s.rate_where.column, 11);
  }
}

TEST(Pacing, OtherWorkloadsRefuseItAtItsPlaceSayingWhy) {
  EXPECT_EQ(testing::errors_of(pacing_suite("    workload: lat\n    rate: 1Gbit/s\n")),
            std::vector<std::string>{
                "s.yaml:6:11: test 't': workload lat does not take rate (a ping-pong has one "
                "message in flight; its pace is its latency); drop rate"});
  EXPECT_EQ(testing::errors_of(pacing_suite("    workload: allreduce\n    rate: 50%\n")),
            std::vector<std::string>{
                "s.yaml:6:11: test 't': workload allreduce does not take rate (a collective's "
                "ranks send as their steps allow, and a host's ranks share no pacer); drop rate"});
  const auto calibration =
      testing::errors_of(pacing_suite("    workload: calibrate_bw\n    rate: 50%\n"));
  ASSERT_EQ(calibration.size(), 1u);
  EXPECT_NE(calibration[0].find("s.yaml:6:11: test 't': workload calibrate_bw does not take rate"),
            std::string::npos)
      << calibration[0];
}

}  // namespace
}  // namespace rocehil::suites
