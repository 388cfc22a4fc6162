// Settings need root: the agent for them starts as root, through passwordless sudo, or not at
// all, and a user who is neither is told so in one line. Run for real as an unprivileged user
// (the test forks and drops to nobody), with the local launcher so no ssh is involved.
#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "rocehil/common/error.hpp"
#include "rocehil/run/fabric_settings.hpp"

namespace rocehil::run {
namespace {

constexpr uid_t nobody = 65534;

// What FabricSettings::restore_left() throws for a local host when run as `uid`; "" if nothing.
std::string error_as(uid_t uid) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    // As the command line does (interrupt.cpp): an agent that exits before it reads its hello
    // (a refused root exits at once) is a write error, not a SIGPIPE that kills the caller. On a
    // loaded machine the refusal often came first, and the child died saying nothing.
    std::signal(SIGPIPE, SIG_IGN);
    std::string message;
    if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 ||
        setresuid(uid, uid, uid) != 0) {
      message = "could not drop to the user";
    } else {
      inventory::Host host;
      host.name = "h1";
      host.launcher = inventory::Launcher::local;
      host.agent = "/bin/true";  // never reached without root
      host.nics.push_back({});
      host.nics.back().ip = "127.0.0.1";
      FabricSettings fabric({{&host, "soft"}}, "fab", std::nullopt, nullptr,
                            std::chrono::seconds(10), "/tmp");
      try {
        fabric.restore_left();
      } catch (const Error& e) {
        message = fmt::format("{} {}", static_cast<int>(e.exit_code()), e.what());
      }
    }
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) out += fmt::format("[the child died of signal {}]", WTERMSIG(status));
  return out;
}

TEST(SettingsAccess, AUserWithoutRootOrPasswordlessSudoIsToldSoBeforeAnythingRuns) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
  const std::string error = error_as(nobody);
  EXPECT_EQ(error,
            "2 host 'h1': changing fabric settings needs root, and its ssh user is not root and "
            "has no passwordless sudo; log in as root (the inventory's ssh user) or allow "
            "passwordless sudo for /bin/true");
}

TEST(SettingsAccess, RootStartsTheAgentItself) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  // As root the agent (here /bin/true, which says nothing) is started: the error is then the
  // agent's silence, not a refusal of root.
  const std::string error = error_as(0);
  EXPECT_EQ(error.find("needs root"), std::string::npos) << error;
  EXPECT_NE(error.find("h1"), std::string::npos) << error;
}

}  // namespace
}  // namespace rocehil::run
