#include "rocehil/reports/run_kind.hpp"

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

TEST(RunKind, TheMostSpecificKindWinsAndTheDetailsStay) {
  EXPECT_EQ(kind_of_run(RunKind::full, "", {}).kind, RunKind::full);
  EXPECT_EQ(kind_of_run(RunKind::full, "", {"a.b=1"}).kind, RunKind::set);
  const RunKindInfo both = kind_of_run(RunKind::full, "p2p*", {"a.b=1"});
  EXPECT_EQ(both.kind, RunKind::only);
  EXPECT_EQ(both.only, "p2p*");
  EXPECT_EQ(both.set, std::vector<std::string>{"a.b=1"});
  const RunKindInfo step = kind_of_run(RunKind::bisect, "incast*", {"switch.ecn_mark_mbps=250"});
  EXPECT_EQ(step.kind, RunKind::bisect);
  EXPECT_EQ(step.only, "incast*");
  EXPECT_EQ(kind_of_run(RunKind::selftest, "", {}).kind, RunKind::selftest);
}

TEST(RunKind, ADescriptionSaysWhatMadeItPartial) {
  EXPECT_EQ(describe(kind_of_run(RunKind::full, "", {})), "a full run");
  EXPECT_EQ(describe(kind_of_run(RunKind::full, "p2p*", {"a.b=1"})), "an --only 'p2p*' run");
  EXPECT_EQ(describe(kind_of_run(RunKind::full, "", {"a.b=1", "c.d=2"})),
            "a --set run (a.b=1, c.d=2)");
  EXPECT_EQ(describe({.kind = RunKind::bisect, .only = {}, .set = {}}), "a bisect step");
}

TEST(RunKind, NamesRoundTrip) {
  for (const RunKind k : RunKinds::all().list()) EXPECT_EQ(parse_run_kind(to_string(k)), k);
  EXPECT_FALSE(parse_run_kind("Full"));
  EXPECT_EQ(RunKinds::all().list().size(), 7u);
}

TEST(RunKind, AKindListTakesFullWithTheUnknownAndRefusesATypo) {
  EXPECT_EQ(parse_run_kinds("all"), RunKinds::all());
  EXPECT_EQ(parse_run_kinds("full"), RunKinds::full_runs());
  EXPECT_EQ(parse_run_kinds("only,bisect"), (RunKinds{RunKind::only, RunKind::bisect}));
  EXPECT_EQ(parse_run_kinds("unknown"), RunKinds{RunKind::unknown});
  try {
    parse_run_kinds("full,bisetc");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()),
              "--kind 'full,bisetc': 'bisetc' is not a kind of run (give 'all' or some of full, "
              "only, set, bisect, selftest, calibrate, unknown separated by commas)");
  }
  EXPECT_THROW(parse_run_kinds(""), Error);
}

TEST(RunKind, AnOldCommandLineSaysWhatKindOfRunItWas) {
  // As remote_command_line quotes them: every word in single quotes.
  EXPECT_EQ(kind_from_command_line("'rocehil' 'run' 'nightly.yaml' '--inventory' 'f.yaml'"),
            (RunKindInfo{.kind = RunKind::full, .only = {}, .set = {}}));
  EXPECT_EQ(kind_from_command_line("'rocehil' 'run' 's.yaml' '--only' 'all'\\''reduce/*' '--set' "
                                   "'roce_rp.rpg_gd=9' '--set' 'a.b=two words'"),
            (RunKindInfo{.kind = RunKind::only,
                         .only = "all'reduce/*",
                         .set = {"roce_rp.rpg_gd=9", "a.b=two words"}}));
  EXPECT_EQ(kind_from_command_line("/usr/bin/rocehil run s.yaml --set=x.y=1").kind, RunKind::set);
  EXPECT_EQ(kind_from_command_line("rocehil run \"my suite.yaml\" --only \"p2p\\\"*\"").only,
            "p2p\"*");
  // A path with " --only " in it is one word, not the option.
  EXPECT_EQ(kind_from_command_line("'rocehil' 'run' 'a --only b.yaml'").kind, RunKind::full);
  EXPECT_EQ(kind_from_command_line("rocehil bisect ... (step 2, candidate '250')").kind,
            RunKind::bisect);
  EXPECT_EQ(kind_from_command_line("'rocehil' 'selftest' '--inventory' 'f.yaml'").kind,
            RunKind::selftest);
  EXPECT_EQ(kind_from_command_line("'rocehil' 'calibrate' '--only' 'bw'").kind, RunKind::calibrate);
  EXPECT_EQ(kind_from_command_line("").kind, RunKind::unknown);
  EXPECT_EQ(kind_from_command_line("python3 nightly.py").kind, RunKind::unknown);
  EXPECT_EQ(kind_from_command_line("'rocehil' 'run' 'unterminated").kind, RunKind::full);
}

}  // namespace
}  // namespace rocehil::reports
