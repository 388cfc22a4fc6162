// The script that starts an agent as root where a host allows it, run for real by /bin/sh: as
// root, and as nobody (no sudo) through setpriv.
#include "rocehil/remote/as_root.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "rocehil/remote/run_command.hpp"

namespace rocehil::remote {
namespace {

std::vector<std::string> as_nobody(std::vector<std::string> words) {
  words.insert(words.begin(),
               {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  return words;
}

TEST(AsRoot, RootRunsTheProgramItselfWithItsArgumentsAsData) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  const std::string mark = "/tmp/rocehil-as-root-pwned-" + std::to_string(getpid());
  for (const WithoutRoot w : {WithoutRoot::run_as_login, WithoutRoot::refuse}) {
    const CommandResult r =
        run_command(as_root("/bin/echo", {"$(touch " + mark + ")", "it's", "-n"}, w), {});
    ASSERT_TRUE(r.succeeded()) << r.reason();
    EXPECT_EQ(r.out, "$(touch " + mark + ") it's -n\n");
    const CommandResult id = run_command(as_root("/usr/bin/id", {"-u"}, w), {});
    EXPECT_EQ(id.out, "0\n");
  }
  EXPECT_FALSE(std::filesystem::exists(mark));
}

TEST(AsRoot, ALoginWithoutRootOrSudoRunsAsItselfOrIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  const CommandResult as_login =
      run_command(as_nobody(as_root("/usr/bin/id", {"-u"}, WithoutRoot::run_as_login)), {});
  ASSERT_TRUE(as_login.succeeded()) << as_login.reason();
  EXPECT_EQ(as_login.out, "65534\n");
  const CommandResult refused =
      run_command(as_nobody(as_root("/usr/bin/id", {"-u"}, WithoutRoot::refuse)), {});
  EXPECT_EQ(refused.exit_code, 77);
  EXPECT_TRUE(refused.out.empty()) << refused.out;
  EXPECT_NE(refused.err.find(not_root_marker), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace rocehil::remote
