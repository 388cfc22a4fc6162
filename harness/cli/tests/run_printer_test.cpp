// What `rocehil run` prints from the orchestrator's events, in each stdout mode.
#include "runs/run_printer.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rocehil/reports/run_json.hpp"
#include "runs/run_text.hpp"

namespace rocehil::cli {
namespace {

reports::RunRecord one_case_run() {
  reports::RunRecord r;
  r.run_id = "20261125T100000Z-tiny";
  r.suite_name = "tiny";
  reports::CaseRecord c;
  c.id = "p2p";
  c.test = "p2p";
  c.outcome = suites::Outcome::pass;
  r.cases.push_back(c);
  return r;
}

const run::RunEvents::Start& tiny_start() {
  static const run::RunEvents::Start start{.suite_name = "tiny",
                                           .suite_file = "tiny.yaml",
                                           .inventory_name = "here",
                                           .inventory_file = "here.yaml",
                                           .cases = 1,
                                           .hosts = 2,
                                           .directory = "reports/x"};
  return start;
}

// Feeds a whole run to `printer` and returns what it printed on stdout.
std::string printed(RunPrinter::Stdout mode) {
  RunPrinter printer(mode);
  const reports::RunRecord r = one_case_run();
  testing::internal::CaptureStdout();
  printer.run_started(tiny_start());
  preflight::CheckReport report;
  report.hosts.resize(2);
  printer.preflight_ended(report, 0);
  printer.test_started("p2p", 1);
  printer.case_started(r.cases[0], 0);
  printer.case_progress(0.5);
  printer.case_ended(r.cases[0], 0);
  printer.test_ended();
  printer.run_ended(r, "reports/x");
  return testing::internal::GetCapturedStdout();
}

TEST(RunPrinter, TextSaysEachStepThenTheVerdictTable) {
  const reports::RunRecord r = one_case_run();
  const std::string expected =
      "rocehil run: suite tiny (tiny.yaml), 1 case on here (2 hosts)\n"
      "preflight: 2 host(s) answered and match the inventory\n" +
      case_line(r.cases[0]) + "\n" + verdict_table(r, "reports/x");
  EXPECT_EQ(printed(RunPrinter::Stdout::text), expected);
}

// A run stopped before its first case (settings that could not be set, a preflight) ran nothing:
// no verdict table and no report to point at, only where its record says why.
TEST(RunPrinter, ARunThatRanNothingPointsAtNoReport) {
  reports::RunRecord r = one_case_run();
  r.cases[0].outcome = suites::Outcome::not_run;
  RunPrinter printer(RunPrinter::Stdout::text);
  testing::internal::CaptureStdout();
  printer.run_ended(r, "reports/x");
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "tiny: nothing was run (1 not run); reports/x/run.json records why\n");
  EXPECT_EQ(out.find("report"), out.find("reports/x/run.json"));
}

TEST(RunPrinter, JsonPrintsRunJsonAlone) {
  EXPECT_EQ(printed(RunPrinter::Stdout::json), reports::to_json(one_case_run()).dump(2) + "\n");
}

TEST(RunPrinter, QuietPrintsNothing) {
  EXPECT_EQ(printed(RunPrinter::Stdout::quiet), "");
}

TEST(RunPrinter, AFailedPreflightNamesEachHostOnStderr) {
  RunPrinter printer(RunPrinter::Stdout::quiet);
  printer.run_started(tiny_start());
  preflight::CheckReport report;
  report.hosts.resize(2);
  report.hosts[0].host = "a";
  report.hosts[0].verdict = preflight::HostVerdict::unreachable;
  report.hosts[0].unreachable = "ssh: connect to host a port 22: Connection refused";
  report.hosts[1].host = "b";
  report.hosts[1].verdict = preflight::HostVerdict::ok;
  testing::internal::CaptureStderr();
  printer.preflight_ended(report, 1);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "rocehil run: preflight failed for 1 of 2 host(s); nothing was run:\n"
            "  a: unreachable: ssh: connect to host a port 22: Connection refused\n"
            "Fix them (rocehil inventory check here.yaml), or leave them out of the suite's "
            "hosts.\n");
}

}  // namespace
}  // namespace rocehil::cli
