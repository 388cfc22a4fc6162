#include <gtest/gtest.h>

#include "record_fixture.hpp"
#include "rocehil/reports/html_report.hpp"
#include "rocehil/reports/junit.hpp"
#include "rocehil/reports/run_json.hpp"
#include "rocehil/suites/starvation.hpp"

namespace rocehil::reports {
namespace {

// The run: a lat case whose h3 agent woke 2.9 ms late at p99 while it measured 3.3 ms.
RunRecord starved_run() {
  RunRecord run;
  run.run_id = "starved";
  run.suite_name = "smoke";
  CaseRecord c =
      testing::graded_case("p2p_lat/size=8", {"lat_p50_us <= 100"}, {{"lat_p50_us", 3300}});
  Attempt& a = c.attempts.back();
  SchedulingReport h3;
  h3.seconds = 2;
  h3.cpus = 2;
  h3.wakeups = 1800;
  h3.wake_late_p50_us = 700;
  h3.wake_late_p99_us = 2900;
  h3.wake_late_max_us = 5000;
  h3.thread_wait_max_ms = 40;
  h3.threads_wait_ms = 55;
  h3.steal_share = 0;
  h3.run_queue_max = 7;
  // A kernel without PSI: absent, not 0.
  SchedulingReport controller = h3;
  controller.wake_late_p99_us = 30;
  controller.wake_late_p50_us = 10;
  a.cpu = {{"h3", h3, false}, {"controller", controller, true}};
  a.cpu_starved = suites::starvation_reasons(a.cpu, a.metrics);
  suites::account_for_starvation(*a.grade, {testing::threshold("lat_p50_us <= 100")},
                                 a.cpu_starved);
  c.outcome = outcome_of(c);
  run.cases.push_back(std::move(c));
  return run;
}

TEST(Starved, RunJsonCarriesEachSourcesSchedulingAndTheFlag) {
  const RunRecord run = starved_run();
  ASSERT_EQ(run.cases[0].outcome, suites::Outcome::fail);  // still a fail, flagged
  const nlohmann::json j = to_json(run);
  const nlohmann::json& a = j["cases"][0]["attempts"][0];
  EXPECT_EQ(a["cpu"]["h3"]["wake_late_p99_us"], 2900);
  EXPECT_EQ(a["cpu"]["h3"]["run_queue_max"], 7);
  EXPECT_EQ(a["cpu"]["h3"]["thread_wait_max_ms"], 40);
  EXPECT_FALSE(a["cpu"]["h3"].contains("pressure_some_share"));
  EXPECT_FALSE(a["cpu"]["h3"].contains("load1"));
  EXPECT_TRUE(a["cpu"].contains("controller"));
  ASSERT_EQ(a["cpu_starved"].size(), 1u);
  EXPECT_EQ(a["cpu_starved"][0],
            "h3: the agent woke 2.9 ms late at p99 (its latency p50 was 3.3 ms); run queue 7 on "
            "2 CPUs");
  EXPECT_EQ(a["grade"]["starved"], a["cpu_starved"]);
  // Read back (rocehil report, compare): the flag and the grade's reasons survive.
  const CaseRecord back = case_record(j["cases"][0]);
  EXPECT_EQ(back.attempts[0].cpu_starved, run.cases[0].attempts[0].cpu_starved);
  EXPECT_EQ(back.attempts[0].grade->starved, run.cases[0].attempts[0].cpu_starved);
  EXPECT_EQ(starved_reasons(back), run.cases[0].attempts[0].cpu_starved);
}

TEST(Starved, JunitCarriesAPropertyAndTheReasons) {
  const std::string xml = junit_xml(starved_run());
  EXPECT_NE(xml.find("<property name=\"cpu_starved\" value=\"h3: the agent woke 2.9 ms late at "
                     "p99 (its latency p50 was 3.3 ms); run queue 7 on 2 CPUs\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("CPU-starved: its timing numbers may be the scheduler&apos;s"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("the case was CPU-starved, which may explain it"), std::string::npos) << xml;
}

TEST(Starved, AnUnstarvedCaseSaysNothingOfIt) {
  RunRecord run = starved_run();
  run.cases[0].attempts[0].cpu_starved.clear();
  EXPECT_EQ(junit_xml(run).find("cpu_starved"), std::string::npos);
  EXPECT_TRUE(starved_reasons(run.cases[0]).empty());
}

TEST(Starved, TheReportShowsTheFlagAndEachSourcesNumbers) {
  const std::string html = html_report(to_json(starved_run()));
  EXPECT_NE(html.find("CPU-starved: h3: the agent woke 2.9 ms late at p99"), std::string::npos);
  EXPECT_NE(html.find("<td>h3</td><td class=\"num\">700 us / 2.9e+03 us / 5e+03 us</td>"),
            std::string::npos)
      << html.substr(html.find("scheduling"), 800);
  EXPECT_NE(html.find("<td>controller</td>"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::reports
