#include "rocehil/testbed/switchd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

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
  return dataplane::run_switch(config_path, log);
}

}  // namespace rocehil::testbed
