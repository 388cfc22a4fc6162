// `traffic_class: {per_qp: [...]}`: several classes over one case's QPs (in a test, in defaults,
// in a part), a plain list still a sweep, and each refusal at its node with why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

const std::string per_qp_head = "schema_version: 1\nname: x\n";

Suite per_qp_loaded(const std::string& text) {
  const SuiteLoadResult r = parse_suite(text, "s.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.suite.value_or(Suite{});
}

TEST(PerQpTrafficClass, MapFormIsOneCaseWithEveryClassInItsId) {
  const Suite s = per_qp_loaded(per_qp_head +
                                "tests:\n  - name: six\n    workload: bw\n    qps: 6\n"
                                "    traffic_class: {per_qp: [106, 98, 42, 34, 26, 18]}\n");
  const TestSettings& t = s.tests.at(0).settings;
  EXPECT_EQ(t.per_qp_traffic_classes, (std::vector<int>{106, 98, 42, 34, 26, 18}));
  EXPECT_EQ(t.traffic_classes, std::vector<int>{106});  // the first, for one-value readers
  const auto cases = expand(s);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].id, "six/tclass=106,98,42,34,26,18");
  EXPECT_EQ(cases[0].traffic_class, 106);
  EXPECT_EQ(cases[0].per_qp_traffic_classes, (std::vector<int>{106, 98, 42, 34, 26, 18}));
}

TEST(PerQpTrafficClass, APlainListIsStillASweep) {
  const Suite s = per_qp_loaded(per_qp_head +
                                "tests:\n  - name: sw\n    workload: bw\n    qps: 2\n"
                                "    traffic_class: [106, 98]\n");
  const auto cases = expand(s);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].id, "sw/tclass=98");
  EXPECT_EQ(cases[1].traffic_class, 98);
  EXPECT_TRUE(cases[1].per_qp_traffic_classes.empty());
}

TEST(PerQpTrafficClass, FromDefaultsSweptWithQpsAndOverriddenByAPlainClass) {
  const Suite s = per_qp_loaded(per_qp_head +
                                "defaults:\n  traffic_class: {per_qp: [106, 98]}\n"
                                "tests:\n  - name: a\n    workload: bw\n    qps: [2, 4]\n"
                                "  - name: b\n    workload: bw\n    traffic_class: 98\n");
  const auto cases = expand(s);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].id, "a/qps=2/tclass=106,98");
  EXPECT_EQ(cases[1].id, "a/qps=4/tclass=106,98");
  EXPECT_EQ(cases[2].id, "b");
  EXPECT_EQ(cases[2].traffic_class, 98);
  EXPECT_TRUE(cases[2].per_qp_traffic_classes.empty());
}

TEST(PerQpTrafficClass, InAPart) {
  const Suite s = per_qp_loaded(per_qp_head +
                                "tests:\n  - name: mix\n    parts:\n"
                                "      - {name: p, workload: bw, hosts: 'h1,h2', qps: 4,"
                                " traffic_class: {per_qp: [106, 98]}}\n"
                                "      - {name: q, workload: bw, hosts: 'h3,h4'}\n");
  const auto& parts = s.tests.at(0).parts;
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].settings.per_qp_traffic_classes, (std::vector<int>{106, 98}));
  EXPECT_TRUE(parts[1].settings.per_qp_traffic_classes.empty());
}

TEST(PerQpTrafficClass, IperfInheritingItFromDefaultsTakesTheFirstClass) {
  const Suite s = per_qp_loaded(per_qp_head +
                                "defaults:\n  traffic_class: {per_qp: [98, 106]}\n"
                                "tests:\n  - name: bg\n    workload: iperf3\n");
  const TestSettings& t = s.tests.at(0).settings;
  EXPECT_TRUE(t.per_qp_traffic_classes.empty());
  EXPECT_EQ(t.traffic_classes, std::vector<int>{98});
}

std::vector<std::string> per_qp_refused(const std::string& test) {
  return testing::errors_of(per_qp_head + "tests:\n  - name: t\n" + test);
}

TEST(PerQpTrafficClass, RefusedAtItsNodeWithWhy) {
  EXPECT_EQ(per_qp_refused("    workload: bw\n    qps: 4\n"
                           "    traffic_class: {per_qp: [106, 98, 42, 34, 26, 18]}\n"),
            std::vector<std::string>{
                "s.yaml:7:20: test 't': traffic_class per_qp gives 6 classes over 4 QPs (qps 4): "
                "the classes past the QPs would never be used; give at most 4 or raise qps"});
  // The fewest QPs of a sweep decide.
  EXPECT_EQ(
      per_qp_refused("    workload: bw\n    qps: [1, 4]\n    traffic_class: {per_qp: [106, 98]}\n")
          .size(),
      1u);
  EXPECT_EQ(
      per_qp_refused("    workload: bw\n    qps: 2\n    traffic_class: {per_qp: [106, 256]}\n"),
      std::vector<std::string>{
          "s.yaml:7:35: test 't': traffic_class: per_qp 256 is out of range; use 0-255"});
  EXPECT_EQ(per_qp_refused("    workload: bw\n    traffic_class: {per_qp: []}\n"),
            std::vector<std::string>{
                "s.yaml:6:29: test 't': traffic_class: per_qp must be a list of one or more "
                "classes (the IP TOS byte, 0..255) such as [106, 98]; QP i gets item i % n"});
  const auto unknown = per_qp_refused("    workload: bw\n    traffic_class: {per_q: [106]}\n");
  ASSERT_FALSE(unknown.empty());
  EXPECT_NE(unknown[0].find("per_q"), std::string::npos) << unknown[0];
  EXPECT_EQ(per_qp_refused("    workload: bw\n    engine: perftest\n    qps: 2\n"
                           "    traffic_class: {per_qp: [106, 98]}\n"),
            std::vector<std::string>{
                "s.yaml:8:20: test 't': traffic_class per_qp needs engine rocehil: perftest "
                "takes one --tclass per process, for all its QPs"});
  EXPECT_EQ(per_qp_refused("    workload: iperf3\n    traffic_class: {per_qp: [106]}\n"),
            std::vector<std::string>{
                "s.yaml:6:20: test 't': workload iperf3 has no QPs to spread traffic_class "
                "per_qp over; give one class"});
}

}  // namespace
}  // namespace rocehil::suites
