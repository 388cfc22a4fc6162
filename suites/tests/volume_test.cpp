// bytes: a bw sender's volume per QP, as whole messages; refused with why where it cannot be sent.
#include <gtest/gtest.h>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

std::string volume_suite(std::string_view body, std::string_view defaults = "{duration_s: 3}") {
  return "schema_version: 1\nname: x\ndefaults: " + std::string(defaults) +
         "\ntests:\n  - name: t\n" + std::string(body);
}

const SuiteTest& only_test(const SuiteLoadResult& r) {
  EXPECT_TRUE(r.suite.has_value())
      << (r.diagnostics.empty() ? "" : inventory::to_string(r.diagnostics.front()));
  return r.suite->tests.at(0);
}

TEST(Volume, BwTakesWholeMessagesUpToOneTerabyte) {
  const auto r = parse_suite(volume_suite("    workload: bw\n    size: 64K\n    bytes: 4G\n"), "s");
  EXPECT_EQ(only_test(r).settings.bytes, std::uint64_t{4} << 30);
  const auto t = parse_suite(volume_suite("    workload: bw\n    size: 1M\n    bytes: 1T\n"), "s");
  EXPECT_EQ(only_test(t).settings.bytes, std::uint64_t{1} << 40);
  const auto plain =
      parse_suite(volume_suite("    workload: bw\n    size: 1\n    bytes: 65536\n"), "s");
  EXPECT_EQ(only_test(plain).settings.bytes, 65536u);
}

TEST(Volume, WithoutBytesBwRunsByDuration) {
  const auto r = parse_suite(volume_suite("    workload: bw\n"), "s");
  EXPECT_EQ(only_test(r).settings.bytes, 0u);
}

TEST(Volume, OutOfRangeOrMalformedIsRefused) {
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    bytes: 2T\n")),
            (std::vector<std::string>{"s.yaml:7:12: test 't': bytes must be one size from 1 byte "
                                      "to 1T such as 1M, 4G or 1T (the payload each QP sends), "
                                      "got '2T'"}));
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    bytes: [1M, 2M]\n")).size(), 1u);
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    bytes: 0\n")).size(), 1u);
}

TEST(Volume, NotAWholeNumberOfMessagesNamesTheNearestValidVolumes) {
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    size: 1M\n    bytes: 2500K\n")),
            (std::vector<std::string>{"s.yaml:8:12: test 't': bytes 2560000 is not a whole number "
                                      "of 1048576-byte messages (size); use 2097152 or 3145728"}));
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    size: 1M\n    bytes: 64K\n")),
            (std::vector<std::string>{"s.yaml:8:12: test 't': bytes 65536 is not a whole number "
                                      "of 1048576-byte messages (size); use 1048576"}));
}

TEST(Volume, BytesAndDurationInOneTestAreRefused) {
  EXPECT_EQ(
      testing::errors_of(volume_suite("    workload: bw\n    bytes: 1M\n    duration_s: 2\n")),
      (std::vector<std::string>{"s.yaml:7:12: test 't': bytes: give bytes (send that much "
                                "per QP) or duration_s (send for that long), not both"}));
}

TEST(Volume, TheTestsDurationWinsOverTheDefaultsVolume) {
  const auto r =
      parse_suite(volume_suite("    workload: bw\n    duration_s: 2\n", "{bytes: 1M}"), "s");
  EXPECT_EQ(only_test(r).settings.bytes, 0u);
  EXPECT_EQ(only_test(r).settings.duration_s, 2);
  // ... and a lat test under that default simply runs its ping-pongs.
  const auto lat = parse_suite(volume_suite("    workload: lat\n", "{bytes: 1M}"), "s");
  EXPECT_EQ(only_test(lat).settings.bytes, 0u);
}

TEST(Volume, WorkloadsThatDoNotSendAVolumeRefuseItWithWhy) {
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: lat\n    bytes: 1M\n", "{}")),
            (std::vector<std::string>{"s.yaml:7:12: test 't': bytes is not used by workload lat: "
                                      "lat runs `iterations` ping-pongs of one message over one "
                                      "QP; drop bytes"}));
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: allreduce\n    bytes: 1M\n", "{}")),
            (std::vector<std::string>{
                "s.yaml:7:12: test 't': bytes is not used by workload allreduce: a collective's "
                "size is per rank per iteration already; give iterations (or duration_s) to run "
                "more of it; drop bytes"}));
  EXPECT_EQ(
      testing::errors_of(volume_suite("    workload: calibrate_bw\n    bytes: 1M\n", "{}")).size(),
      1u);
}

TEST(Volume, PerftestSendsItAsIterationsPerQpWithinItsRange) {
  const auto r = parse_suite(
      volume_suite("    workload: bw\n    engine: perftest\n    size: 64K\n    bytes: 4G\n"), "s");
  EXPECT_EQ(only_test(r).settings.bytes, std::uint64_t{4} << 30);
  EXPECT_EQ(testing::errors_of(volume_suite("    workload: bw\n    engine: perftest\n    size: 1M\n"
                                            "    bytes: 2M\n")),
            (std::vector<std::string>{"s.yaml:9:12: test 't': engine perftest sends bytes as -n 2 "
                                      "messages of 1048576 bytes per QP, and takes 5 to 100000000; "
                                      "change bytes or size, or use engine rocehil"}));
}

TEST(Volume, EventsOfAByVolumeRunAreNotBoundByDuration) {
  const auto r =
      parse_suite(volume_suite("    workload: bw\n    bytes: 1G\n    events:\n"
                               "      - {at_s: 10, action: command, host: a, command: c}\n",
                               "{}"),
                  "s");
  EXPECT_TRUE(r.suite.has_value() || r.diagnostics.size() > 0);
  for (const auto& d : r.diagnostics)
    EXPECT_EQ(inventory::to_string(d).find("the traffic is over"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::suites
