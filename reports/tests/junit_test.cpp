#include "rocehil/reports/junit.hpp"

#include <gtest/gtest.h>

#include "record_fixture.hpp"

namespace rocehil::reports {
namespace {

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Junit, OneTestcasePerCaseWithFailuresCarryingTheThreshold) {
  const std::string xml = junit_xml(testing::sample_run());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_EQ(occurrences(xml, "<testcase "), 5u);
  EXPECT_NE(xml.find("<testsuite name=\"smoke\" tests=\"5\" failures=\"1\" errors=\"1\" "
                     "skipped=\"1\""),
            std::string::npos);
  EXPECT_NE(xml.find("<testcase classname=\"smoke.allreduce\" name=\"allreduce/qps=8\" "
                     "time=\"1.500\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"threshold\" message=\"busbw_gbps &gt; 0.5 * link_gbps\">"),
            std::string::npos);
  // The host and the phase name the error; its text is escaped.
  EXPECT_NE(xml.find("<error type=\"setup\" message=\"h3: setup: agent on h3 exited &lt;code "
                     "137&gt; &amp; said nothing\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"not run: the run was interrupted\"/>"), std::string::npos);
  // The expected failure passes and says so.
  const auto storm = xml.find("name=\"pfc_storm\"");
  ASSERT_NE(storm, std::string::npos);
  const auto storm_end = xml.find("</testcase>", storm);
  const std::string storm_xml = xml.substr(storm, storm_end - storm);
  EXPECT_EQ(storm_xml.find("<failure"), std::string::npos);
  EXPECT_NE(storm_xml.find("failed as expected"), std::string::npos);
}

TEST(Junit, AnUnexpectedPassIsAFailure) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::graded_case("pfc_storm", {"pfc_storms == 0"}, {{"pfc_storms", 0}},
                                           /*expect_fail=*/true));
  const std::string xml = junit_xml(run);
  EXPECT_NE(xml.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("<failure type=\"expected_fail\""), std::string::npos);
}

// A case the hosts cannot take is skipped with its reason: not an error, and the exit status is
// that of the cases that ran, so a CI job reading the file agrees with the command.
TEST(Junit, ASkippedCaseIsSkippedWithItsReasonAndCountsForNothingElse) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::graded_case("p2p_bw", {"busbw_gbps > 0"}, {{"busbw_gbps", 1.5}}));
  CaseRecord ud;
  ud.id = ud.test = "ud_send";
  ud.skip_reason = "hardware check: h1 uses the soft provider, which implements RC only";
  ud.outcome = outcome_of(ud);
  EXPECT_EQ(ud.outcome, suites::Outcome::skipped);
  run.cases.push_back(ud);
  const std::string xml = junit_xml(run);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"hardware check: h1 uses the soft provider, which "
                     "implements RC only\"/>"),
            std::string::npos);
  EXPECT_EQ(suites::run_exit_code({run.cases[0].outcome, ud.outcome}, false), 0);
  EXPECT_EQ(summary_line(count_outcomes(run)), "1 passed, 1 skipped");
}

TEST(Junit, EscapesWhatXmlCannotHoldRaw) {
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(xml_escape(std::string("x\0y\x1b\tz\n", 7)), "x?y?\tz\n");
}

}  // namespace
}  // namespace rocehil::reports
