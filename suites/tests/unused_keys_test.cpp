// Keys a workload would not use are refused where the test writes them, and a collective that
// writes duration_s runs for it.
#include <gtest/gtest.h>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

std::string one_test(std::string_view body) {
  return "schema_version: 1\nname: x\ndefaults: {iterations: 7, duration_s: 3, pipeline: 4}\n"
         "tests:\n  - name: t\n" +
         std::string(body);
}

TEST(UnusedKeys, AKeyTheWorkloadWouldIgnoreIsRefusedWhereTheTestWritesIt) {
  EXPECT_EQ(testing::errors_of(one_test("    workload: incast\n    opcode: write\n"
                                        "    pipeline: 2\n")),
            (std::vector<std::string>{
                "s.yaml:7:13: test 't': opcode is not used by workload incast: a collective's "
                "steps are RDMA WRITE with immediate (the immediate tells the receiver a step's "
                "data arrived), whatever opcode says; use workload bw for a WRITE-only sender; "
                "drop opcode",
                "s.yaml:8:15: test 't': pipeline is not used by workload incast: pipeline splits "
                "the message of broadcast and tree_allreduce only; drop pipeline"}));
  EXPECT_EQ(testing::errors_of(one_test("    workload: bw\n    iterations: 100\n")),
            (std::vector<std::string>{
                "s.yaml:7:17: test 't': iterations is not used by workload bw: bw runs for "
                "duration_s (its first 0.2 s unmeasured), not by iterations; drop iterations"}));
  EXPECT_EQ(testing::errors_of(one_test("    workload: lat\n    duration_s: 5\n")).size(), 1u);
  EXPECT_EQ(testing::errors_of(one_test("    workload: allreduce\n    rounds: 3\n")).size(), 1u);
  EXPECT_EQ(testing::errors_of(one_test("    workload: allreduce\n    duration_s: 5\n"
                                        "    iterations: 10\n"))
                .size(),
            1u);
}

TEST(UnusedKeys, DefaultsServeEveryWorkloadAndWhatAWorkloadUsesIsKept) {
  const SuiteLoadResult r = parse_suite(
      one_test("    workload: bw\n  - name: c\n    workload: incast\n    duration_s: 4\n"
               "  - name: i\n    workload: incast\n  - name: b\n    workload: broadcast\n"
               "    pipeline: 2\n    opcode: write_with_imm\n"),
      "s.yaml");
  ASSERT_TRUE(r.suite) << inventory::to_string(r.diagnostics.front());
  const auto& tests = r.suite->tests;
  EXPECT_FALSE(tests[0].settings.collective_by_duration);  // bw: duration is how it runs
  EXPECT_TRUE(tests[1].settings.collective_by_duration);   // written in the test
  EXPECT_EQ(tests[1].settings.duration_s, 4);
  EXPECT_FALSE(tests[2].settings.collective_by_duration);  // only the defaults' duration_s
  EXPECT_EQ(tests[3].settings.pipeline, 2);
}

TEST(UnusedKeys, APartRunsByItsOwnKeyOverItsTests) {
  const SuiteLoadResult r =
      parse_suite(one_test("    duration_s: 5\n    parts:\n"
                           "      - {name: a, workload: incast}\n"
                           "      - {name: b, workload: incast, iterations: 50}\n"
                           "      - {name: c, workload: bw, pipeline: 3}\n"),
                  "s.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_NE(inventory::to_string(r.diagnostics[0])
                .find("s.yaml:10:43: test 't': part 'c': pipeline is not used by workload bw"),
            std::string::npos)
      << inventory::to_string(r.diagnostics[0]);
  const auto& parts = r.partial->tests[0].parts;
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(parts[0].settings.collective_by_duration);   // the test's duration_s
  EXPECT_FALSE(parts[1].settings.collective_by_duration);  // its own iterations
}

}  // namespace
}  // namespace rocehil::suites
