// run_command with real programs: what it collects, where stdout goes when asked to a file, and
// what it says when it cannot start.
#include "rocehil/remote/run_command.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rocehil::remote {
namespace {

TEST(RunCommand, CollectsStdoutStderrAndTheExitCode) {
  const CommandResult r = run_command({"sh", "-c", "printf out; echo why >&2; exit 3"}, {});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out");
  EXPECT_EQ(r.reason(), "why");
}

// ssh says "ssh: connect to host ...: Connection refused" itself: the reason is said once.
TEST(RunCommand, AnSshReasonIsSaidAsSshOnce) {
  const CommandResult ssh_said =
      run_command({"sh", "-c",
                   "echo 'ssh: connect to host 198.18.1.12 port 22: Connection refused' >&2; "
                   "exit 255"},
                  {});
  EXPECT_EQ(ssh_said.ssh_reason(), "ssh: connect to host 198.18.1.12 port 22: Connection refused");
  const CommandResult other =
      run_command({"sh", "-c", "echo 'Permission denied' >&2; exit 255"}, {});
  EXPECT_EQ(other.ssh_reason(), "ssh: Permission denied");
}

TEST(RunCommand, TextOnStdinComesThroughAPipeAndEnds) {
  RunOptions options;
  options.stdin_text = "secret-line\nrest\n";
  // The command reads its input to the end: EOF comes after the text.
  const CommandResult r = run_command(
      {"sh", "-c", "read first; cat >/dev/null; echo \"$first\"; ls -l /proc/self/fd/0"}, options);
  EXPECT_TRUE(r.succeeded()) << r.reason();
  EXPECT_TRUE(r.out.starts_with("secret-line\n")) << r.out;
  EXPECT_NE(r.out.find("pipe:"), std::string::npos) << r.out;
  options.stdin_text = std::string(5000, 'x');
  EXPECT_FALSE(run_command({"true"}, options).started);
}

TEST(RunCommand, StdoutToAFileTakesAllOfItAndLeavesOutEmpty) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("rocehil-stdout-" + std::to_string(getpid()));
  RunOptions options;
  options.stdout_file = file.string();
  options.max_output = 16;  // a bound on `out`, not on the file
  const CommandResult r =
      run_command({"sh", "-c", "head -c 300000 /dev/zero; echo done >&2"}, options);
  EXPECT_TRUE(r.succeeded()) << r.reason();
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "done\n");
  EXPECT_EQ(std::filesystem::file_size(file), 300000u);
  std::filesystem::remove(file);
}

TEST(RunCommand, AFileItCannotWriteIsTheAnswerAndNothingStarts) {
  RunOptions options;
  options.stdout_file = "/nonexistent-dir/out";
  const CommandResult r = run_command({"true"}, options);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.start_error.rfind("cannot write /nonexistent-dir/out: ", 0), 0u) << r.start_error;
}

}  // namespace
}  // namespace rocehil::remote
