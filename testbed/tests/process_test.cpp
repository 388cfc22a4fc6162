#include "tools/process.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {
namespace {

TEST(Process, PassesStdinAndCollectsBothOutputs) {
  const CommandResult r = run({"sh", "-c", "cat; echo oops >&2; exit 3"}, "hello\n");
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(r.err, "oops\n");
}

TEST(Process, LargeOutputsOnBothPipesDoNotDeadlock) {
  const std::string input(1 << 20, 'x');
  const CommandResult r = run({"sh", "-c", "cat; head -c 1048576 /dev/zero >&2"}, input);
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_EQ(r.out.size(), input.size());
  EXPECT_EQ(r.err.size(), 1u << 20);
}

TEST(Process, ChildThatIgnoresItsInputIsFine) {
  const CommandResult r = run({"true"}, std::string(1 << 20, 'y'));
  EXPECT_EQ(r.exit_status, 0);
}

TEST(Process, CheckedFailureNamesTheStepCommandAndMessage) {
  try {
    run_checked("configuring h1",
                {"sh", "-c", "echo 'Error: Nexthop has invalid gateway.' >&2; exit 2"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    const std::string what = e.what();
    EXPECT_NE(what.find("configuring h1"), std::string::npos);
    EXPECT_NE(what.find("exited with 2"), std::string::npos);
    EXPECT_NE(what.find("Nexthop has invalid gateway"), std::string::npos);
  }
}

TEST(Process, MissingProgramIsAnError) {
  EXPECT_THROW(run({"/nonexistent/rocehil-tool"}), Error);
  EXPECT_EQ(find_in_path("rocehil-no-such-tool"), "");
  EXPECT_NE(find_in_path("sh"), "");
}

TEST(Process, ShellWordsQuoteWhatAShellWouldSplit) {
  EXPECT_EQ(shell_words({"ip", "-n", "ns1", "route"}), "ip -n ns1 route");
  EXPECT_EQ(shell_words({"echo", "a b", "it's"}), "echo 'a b' 'it'\\''s'");
}

}  // namespace
}  // namespace rocehil::testbed
