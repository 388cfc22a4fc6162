#include "files/byte_window.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

// The buffer grows in whole pages when a record does not fit, so a run of slightly different
// large records does not reallocate for each one.
constexpr std::size_t grow_granule = 4096;

std::size_t round_up(std::size_t v, std::size_t to) noexcept {
  const std::size_t r = v % to;
  return r == 0 ? v : v + (to - r);
}

// A path the user typed wrong is bad input (exit 2) and says what to check; anything else is the
// machine's problem (exit 3). Both keep errno for callers that branch on it.
Error open_error(const std::string& name, int err) {
  const char* hint = nullptr;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG: hint = "check the path"; break;
    case EACCES:
    case EPERM: hint = "check the file's permissions or run as a user who can read it"; break;
    default: return system_error(name + ": cannot open the capture file", err);
  }
  return Error(ExitCode::bad_input, name + ": cannot open: " + std::strerror(err) + "; " + hint,
               err);
}

}  // namespace

ByteWindow ByteWindow::open(const std::string& path, const std::string& display_name,
                            const WindowOptions& options) {
  ByteWindow w;
  if (path == "-") {
    w.fd_ = STDIN_FILENO;
  } else {
    int fd;
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) throw open_error(display_name, errno);
    w.fd_ = fd;
    w.owns_fd_ = true;
  }

  struct stat st {};
  if (::fstat(w.fd_, &st) != 0) throw system_error(display_name + ": cannot inspect", errno);
  if (S_ISDIR(st.st_mode)) {
    throw Error(ExitCode::bad_input,
                display_name + ": is a directory; give the path of a pcap or pcapng file", EISDIR);
  }

  if (S_ISREG(st.st_mode)) {
    w.seekable_ = true;
    // Standard input redirected from a file may already be part way into it; progress counts
    // from where reading starts. A size of 0 (procfs and the like) means unknown, and reading
    // still finds whatever the file holds.
    const off_t start = ::lseek(w.fd_, 0, SEEK_CUR);
    if (start >= 0 && start <= st.st_size) {
      w.input_size_ = static_cast<std::uint64_t>(st.st_size - start);
    }
    // Doubles the kernel's readahead, which keeps a cold-cache read ahead of the decoder. Advice
    // only: a file system that ignores it reads correctly anyway.
    ::posix_fadvise(w.fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }

  w.mode_ = Mode::read;
  w.capacity_ = options.read_bytes > 0 ? options.read_bytes : 1;
  w.buffer_ = std::make_unique_for_overwrite<std::uint8_t[]>(w.capacity_);
  w.data_ = w.buffer_.get();
  return w;
}

ByteWindow ByteWindow::memory(std::span<const std::uint8_t> bytes) {
  ByteWindow w;
  w.mode_ = Mode::memory;
  w.input_size_ = bytes.size();
  w.data_ = bytes.data();
  w.size_ = bytes.size();
  return w;
}

ByteWindow::ByteWindow(ByteWindow&& other) noexcept
    : mode_(other.mode_),
      fd_(std::exchange(other.fd_, -1)),
      owns_fd_(std::exchange(other.owns_fd_, false)),
      seekable_(other.seekable_),
      input_size_(other.input_size_),
      data_(std::exchange(other.data_, nullptr)),
      offset_(other.offset_),
      size_(std::exchange(other.size_, 0)),
      buffer_(std::move(other.buffer_)),
      capacity_(std::exchange(other.capacity_, 0)),
      eof_(other.eof_),
      error_(other.error_) {}

ByteWindow::~ByteWindow() {
  if (owns_fd_) ::close(fd_);
}

std::size_t ByteWindow::ensure(std::uint64_t at, std::size_t len) noexcept {
  // Already visible: the common case, and the only one for memory.
  if (at >= offset_ && at - offset_ <= size_ && len <= size_ - (at - offset_)) {
    return size_ - static_cast<std::size_t>(at - offset_);
  }
  if (mode_ == Mode::read) return ensure_read(at, len);
  if (at < offset_ || at - offset_ > size_) return 0;
  return size_ - static_cast<std::size_t>(at - offset_);
}

void ByteWindow::wait_readable() const noexcept {
  pollfd pfd{fd_, POLLIN, 0};
  ::poll(&pfd, 1, -1);
}

std::size_t ByteWindow::read_some(std::uint8_t* dst, std::size_t want) noexcept {
  const ssize_t n = ::read(fd_, dst, want);
  if (n > 0) return static_cast<std::size_t>(n);
  if (n == 0) {
    eof_ = true;
  } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
    wait_readable();
  } else if (errno != EINTR) {
    error_ = errno;
  }
  return 0;
}

bool ByteWindow::skip_forward(std::uint64_t skip) noexcept {
  if (skip == 0) return true;
  if (eof_ || error_ != 0) return false;
  // A regular file moves its position without the bytes being copied. Seeking past the end is
  // allowed; the read that follows then reports the end, as reading through would have.
  if (seekable_ && skip <= static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()) &&
      ::lseek(fd_, static_cast<off_t>(skip), SEEK_CUR) >= 0) {
    offset_ += skip;
    return true;
  }
  // Pipes cannot seek: read through, into the buffer, whose contents are discarded anyway.
  while (skip > 0 && !eof_ && error_ == 0) {
    const std::size_t want = skip < capacity_ ? static_cast<std::size_t>(skip) : capacity_;
    const std::size_t n = read_some(buffer_.get(), want);
    offset_ += n;
    skip -= n;
  }
  return skip == 0;
}

std::size_t ByteWindow::ensure_read(std::uint64_t at, std::size_t len) noexcept {
  if (at < offset_) return 0;  // the input only moves forward
  const std::uint64_t rel = at - offset_;
  if (rel < size_) {
    // Compact: keep the unconsumed tail (at most one partial record), which the caller is about
    // to need again. Moving it to the front keeps the buffer, and so the cache footprint, fixed.
    const std::size_t drop = static_cast<std::size_t>(rel);
    if (drop > 0) std::memmove(buffer_.get(), buffer_.get() + drop, size_ - drop);
    size_ -= drop;
    offset_ = at;
  } else {
    // Skip forward past bytes the caller never needs to see (a block it ignores).
    const std::uint64_t skip = rel - size_;
    offset_ += size_;
    size_ = 0;
    if (!skip_forward(skip)) return 0;
  }

  if (len > capacity_) {
    // One record larger than the buffer: grow to hold it, and keep the larger buffer, since a
    // capture with one such record usually has more.
    const std::size_t grown = round_up(len, grow_granule);
    auto* bigger = new (std::nothrow) std::uint8_t[grown];
    if (bigger == nullptr) {
      error_ = ENOMEM;
      return size_;
    }
    std::memcpy(bigger, buffer_.get(), size_);
    buffer_.reset(bigger);
    capacity_ = grown;
    data_ = buffer_.get();
  }

  // Each read asks for all the free space: a regular file fills the buffer in one call, a pipe
  // returns what it holds. Stop once `len` is there so a slow producer does not stall the reader.
  while (size_ < len && !eof_ && error_ == 0)
    size_ += read_some(buffer_.get() + size_, capacity_ - size_);
  return size_;
}

}  // namespace rocehil::capture
