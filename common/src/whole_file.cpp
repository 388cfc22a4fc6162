#include "rocehil/common/whole_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "rocehil/common/error.hpp"

namespace rocehil {

namespace {

void write_all(int fd, std::string_view content, const std::string& path) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error(fmt::format("cannot write {}", path), errno);
    content.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

void write_file_whole(const std::string& target, std::string_view content) {
  const std::string temporary = target + ".partial";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw system_error(fmt::format("cannot write {}", temporary), errno);
  try {
    write_all(fd, content, temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    throw system_error(fmt::format("cannot write {}", temporary), saved);
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    throw system_error(fmt::format("cannot rename {} to {}", temporary, target), saved);
  }
}

}  // namespace rocehil
