#include "rocehil/testbed/switchd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "dataplane/switch_loop.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

int run_switchd(const std::string& netns, const std::string& config_path,
                const std::function<void(std::string_view)>& log) {
  const std::string path = "/run/netns/" + netns;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw system_error(fmt::format("switchd: cannot open {} (is the testbed up?)", path), errno);
  const int entered = ::setns(fd, CLONE_NEWNET);
  const int why = errno;
  ::close(fd);
  if (entered != 0)
    throw system_error(fmt::format("switchd: cannot enter network namespace {}", netns), why);
  // A switch's forwarding is its ASIC's, never short of time; here it shares two cores with the
  // hosts' senders, and each millisecond it waits for a CPU is a millisecond of line rate that
  // arrives before its XOFF goes out. Ahead of them in the queue for a CPU (not real-time: a
  // bug in the loop must not take the machine).
  if (::setpriority(PRIO_PROCESS, 0, -10) != 0)
    log(fmt::format("switchd: cannot raise its priority (nice -10): {}", std::strerror(errno)));
  return dataplane::run_switch(config_path, log);
}

}  // namespace rocehil::testbed
