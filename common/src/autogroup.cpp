#include "rocehil/common/autogroup.hpp"

#include <unistd.h>

#include <fstream>

namespace rocehil {

bool set_session_group_nice(int nice) noexcept {
  if (::getsid(0) != ::getpid()) return false;
  std::ofstream group("/proc/self/autogroup");
  if (!group) return false;
  group << nice << std::flush;
  return static_cast<bool>(group);
}

}  // namespace rocehil
