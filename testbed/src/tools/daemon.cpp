#include "rocehil/testbed/daemon.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

bool detach_daemon(const std::string& pid_file) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) throw system_error("pipe2", errno);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(ready[0]);
    ::close(ready[1]);
    throw system_error("fork", e);
  }
  if (pid > 0) {
    ::close(ready[1]);
    char byte = 0;
    ssize_t n = 0;
    do {
      n = ::read(ready[0], &byte, 1);
    } while (n < 0 && errno == EINTR);
    ::close(ready[0]);
    if (n != 1)
      throw Error(ExitCode::infrastructure,
                  fmt::format("the daemon exited before it wrote its pid to {}; check that the "
                              "directory is writable",
                              pid_file));
    return false;
  }
  ::close(ready[0]);
  ::setsid();
  const int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
  if (null > 2) ::close(null);
  {
    const std::string temporary = pid_file + ".tmp";
    std::ofstream out(temporary, std::ios::trunc);
    out << ::getpid() << '\n';
    out.close();
    if (!out || std::rename(temporary.c_str(), pid_file.c_str()) != 0)
      throw system_error(fmt::format("cannot write {}", pid_file), errno);
  }
  const char byte = '1';
  while (::write(ready[1], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[1]);
  return true;
}

}  // namespace rocehil::testbed
