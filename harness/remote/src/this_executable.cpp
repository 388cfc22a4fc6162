#include "rocehil/remote/this_executable.hpp"

#include <unistd.h>

#include <cerrno>

#include "rocehil/common/error.hpp"

namespace rocehil::remote {

std::string this_executable() {
  char path[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw system_error("cannot find this executable (/proc/self/exe)", errno);
  return std::string(path, static_cast<std::size_t>(n));
}

}  // namespace rocehil::remote
