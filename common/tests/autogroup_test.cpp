// The session group's nice, on this machine's kernel: set by a session leader (as a daemon
// after setsid is), refused to a process that leads none.
#include "rocehil/common/autogroup.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rocehil {
namespace {

std::string own_group() {
  std::ifstream in("/proc/self/autogroup");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Autogroup, ASessionLeaderSetsItsGroupsNiceAndOthersAreRefused) {
  if (own_group().empty() || ::geteuid() != 0)
    GTEST_SKIP() << "this kernel has no autogroups (/proc/self/autogroup), or not root";
  // This test process leads no session (ctest started it): its group is its caller's.
  if (::getsid(0) != ::getpid()) {
    const std::string before = own_group();
    EXPECT_FALSE(set_session_group_nice(-3));
    EXPECT_EQ(own_group(), before);
  }
  // A child that becomes a session's leader, as detach_daemon makes a switch: its own group.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    const bool led = ::setsid() == ::getpid();
    const bool set = led && set_session_group_nice(-3);  // before the group is read back
    const std::string said = (set ? "set " : "refused ") + own_group();
    [[maybe_unused]] const auto n = ::write(pipe_fds[1], said.data(), said.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string said;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) said.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(said.rfind("set /autogroup-", 0), 0u) << said;
  EXPECT_NE(said.find(" nice -3\n"), std::string::npos) << said;
}

}  // namespace
}  // namespace rocehil
