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
  EXPECT_NE(xml.find("<failure type=\"threshold\" message=\"busbw_gbps &gt; 0.5 * link_gbps: "
                     "busbw_gbps = 0.25, needs &gt; 0.5\">"),
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

std::string testcase_of(const std::string& xml, std::string_view name) {
  const auto at = xml.find("name=\"" + std::string(name) + "\"");
  if (at == std::string::npos) return "";
  return xml.substr(at, xml.find("</testcase>", at) - at);
}

// Five repeats, none retried: the file gives their median, says they are repeats, and the
// failure quotes the repeat that failed (the second), not the last (which passed).
TEST(Junit, RepeatsAreTheirMedianAndAFailureQuotesItsWorstRepeat) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::five_repeats("busbw_gbps >= 0.25"));
  const std::string xml = testcase_of(junit_xml(run), "p2p_bw");
  EXPECT_NE(xml.find("<failure type=\"threshold\" message=\"busbw_gbps &gt;= 0.25: failed in 1 "
                     "of 5 repeats; the worst, repeat 2: busbw_gbps = 0.229, needs &gt;= 0.25\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("bw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)\n"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("5 repeats, each graded on its own; the worst decides the case\n"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("retried"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("attempts"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("0.395 Gbit"), std::string::npos) << xml;
}

// A retry is said as one only when a failure was retried.
TEST(Junit, ARetryIsSaidOnlyWhenOneHappened) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::repeated_case(
      "p2p_bw", {"busbw_gbps >= 0.3"},
      {{{{"busbw_gbps", 0.1}}, {{"busbw_gbps", 0.4}}}, {{{"busbw_gbps", 0.5}}}}, "bw"));
  const std::string xml = testcase_of(junit_xml(run), "p2p_bw");
  EXPECT_NE(xml.find("1 retry after a failure\n"), std::string::npos) << xml;
  EXPECT_NE(xml.find("2 repeats, each graded on its own"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
}

// An error names the repeat that measured nothing, not whatever the last repeat did.
TEST(Junit, AnErrorNamesTheRepeatThatMeasuredNothing) {
  RunRecord run;
  run.suite_name = "s";
  CaseRecord c =
      testing::repeated_case("ring", {"busbw_gbps >= 0.1"},
                             {{{{"busbw_gbps", 1}}}, {{{"busbw_gbps", 2}}}, {{{"busbw_gbps", 4}}}});
  c.attempts[1].grade.reset();
  c.attempts[1].error = AttemptError{"h2", "traffic", "agent died"};
  c.outcome = outcome_of(c);
  run.cases.push_back(c);
  const std::string xml = testcase_of(junit_xml(run), "ring");
  EXPECT_NE(xml.find("<error type=\"traffic\" message=\"repeat 2 of 3: h2: traffic: agent "
                     "died\">"),
            std::string::npos)
      << xml;
}

// The fabric failed a repeat's traffic: a <failure> naming it, not an <error>, and it is named
// before another repeat's infrastructure error.
TEST(Junit, AFabricFaultIsAFailure) {
  RunRecord run;
  run.suite_name = "s";
  CaseRecord c =
      testing::repeated_case("ring", {"busbw_gbps >= 0.1"},
                             {{{{"busbw_gbps", 1}}}, {{{"busbw_gbps", 2}}}, {{{"busbw_gbps", 4}}}});
  c.attempts[0].grade.reset();
  c.attempts[0].error = AttemptError{"h2", "traffic", "agent died"};
  c.attempts[2].grade.reset();
  c.attempts[2].error =
      AttemptError{"h4", "traffic", "the fabric: QP 0x11: retry_exceeded", Fault::fabric};
  c.outcome = outcome_of(c);
  run.cases.push_back(c);
  const std::string all = junit_xml(run);
  const std::string xml = testcase_of(all, "ring");
  EXPECT_NE(xml.find("<failure type=\"fabric\" message=\"repeat 3 of 3: h4: traffic: the "
                     "fabric: QP 0x11: retry_exceeded\">"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("<error"), std::string::npos) << xml;
  EXPECT_NE(all.find("failures=\"1\""), std::string::npos) << all;
  EXPECT_NE(all.find("errors=\"0\""), std::string::npos) << all;
}

TEST(Junit, EscapesWhatXmlCannotHoldRaw) {
  EXPECT_EQ(xml_escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(xml_escape(std::string("x\0y\x1b\tz\n", 7)), "x?y?\tz\n");
}

}  // namespace
}  // namespace rocehil::reports
