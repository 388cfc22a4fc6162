// QPs per connection: bw and collectives up to 16384, refused beyond with the range.
#include <gtest/gtest.h>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

std::string qps_suite(std::string_view body) {
  return "schema_version: 1\nname: x\ntests:\n  - name: t\n" + std::string(body);
}

TEST(QpLimits, BwTakesUpToSixteenThousandQpsPerConnection) {
  const auto r = parse_suite(qps_suite("    workload: bw\n    qps: [4096, 16384]\n"), "s");
  ASSERT_TRUE(r.suite.has_value());
  EXPECT_EQ(r.suite->tests[0].settings.qps, (std::vector<std::uint32_t>{4096, 16384}));
  EXPECT_EQ(testing::errors_of(qps_suite("    workload: bw\n    qps: 16385\n")),
            (std::vector<std::string>{"s.yaml:6:10: test 't': qps 16385 is out of range; use "
                                      "1-16384"}));
}

TEST(QpLimits, ACollectiveTakesUpToSixteenThousandQpsPerConnection) {
  // Past 256 the immediate's share field widens: once the limit, now a collective's too.
  const auto r =
      parse_suite(qps_suite("    workload: allreduce\n    qps: [256, 257, 16384]\n"), "s");
  ASSERT_TRUE(r.suite.has_value());
  EXPECT_EQ(r.suite->tests[0].settings.qps, (std::vector<std::uint32_t>{256, 257, 16384}));
  EXPECT_EQ(testing::errors_of(qps_suite("    workload: alltoall\n    qps: [8, 16385]\n")),
            (std::vector<std::string>{"s.yaml:6:14: test 't': qps 16385 is out of range; use "
                                      "1-16384"}));
}

}  // namespace
}  // namespace rocehil::suites
