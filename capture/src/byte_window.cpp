#include "byte_window.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

std::size_t page_size() noexcept {
  static const std::size_t size = [] {
    const long v = ::sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<std::size_t>(v) : std::size_t{4096};
  }();
  return size;
}

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

  // A regular file that reports size 0 may still have content (procfs and friends); reading it
  // finds out, mapping would not.
  if (S_ISREG(st.st_mode) && st.st_size > 0 && !options.force_read) {
    w.mode_ = Mode::map;
    w.file_size_ = static_cast<std::uint64_t>(st.st_size);
    w.window_ = round_up(std::max(options.map_bytes, page_size()), page_size());
    w.ensure_map(0, 1);
    if (w.error_ == 0) return w;
    // Some file systems cannot map; nothing has been consumed yet, so reading from the start works.
    w.unmap();
    w.error_ = 0;
    w.data_ = nullptr;
    w.offset_ = 0;
    w.size_ = 0;
  }

  w.mode_ = Mode::read;
  w.window_ = std::max<std::size_t>(options.read_bytes, 1);
  w.capacity_ = w.window_;
  w.buffer_.reset(new std::uint8_t[w.capacity_]);
  w.data_ = w.buffer_.get();
  return w;
}

ByteWindow ByteWindow::memory(std::span<const std::uint8_t> bytes) {
  ByteWindow w;
  w.mode_ = Mode::memory;
  w.file_size_ = bytes.size();
  w.data_ = bytes.data();
  w.size_ = bytes.size();
  return w;
}

ByteWindow::ByteWindow(ByteWindow&& other) noexcept
    : mode_(other.mode_),
      fd_(std::exchange(other.fd_, -1)),
      owns_fd_(std::exchange(other.owns_fd_, false)),
      file_size_(other.file_size_),
      window_(other.window_),
      data_(std::exchange(other.data_, nullptr)),
      offset_(other.offset_),
      size_(std::exchange(other.size_, 0)),
      map_base_(std::exchange(other.map_base_, nullptr)),
      map_len_(std::exchange(other.map_len_, 0)),
      buffer_(std::move(other.buffer_)),
      capacity_(std::exchange(other.capacity_, 0)),
      eof_(other.eof_),
      error_(other.error_) {}

ByteWindow::~ByteWindow() {
  unmap();
  if (owns_fd_) ::close(fd_);
}

void ByteWindow::unmap() noexcept {
  if (map_base_ != nullptr) ::munmap(map_base_, map_len_);
  map_base_ = nullptr;
  map_len_ = 0;
}

std::size_t ByteWindow::ensure(std::uint64_t at, std::size_t len) noexcept {
  // Already visible: the common case, and the only one for memory.
  if (at >= offset_ && at - offset_ <= size_ && len <= size_ - (at - offset_)) {
    return size_ - static_cast<std::size_t>(at - offset_);
  }
  switch (mode_) {
    case Mode::map: return ensure_map(at, len);
    case Mode::read: return ensure_read(at, len);
    case Mode::memory: break;
  }
  if (at < offset_ || at - offset_ > size_) return 0;
  return size_ - static_cast<std::size_t>(at - offset_);
}

std::size_t ByteWindow::ensure_map(std::uint64_t at, std::size_t len) noexcept {
  if (at >= file_size_) return 0;
  // Unmap first so at most one window is resident: this is what bounds RSS.
  unmap();
  data_ = nullptr;
  size_ = 0;
  const std::uint64_t aligned = at - at % page_size();
  const std::size_t lead = static_cast<std::size_t>(at - aligned);
  std::size_t want = window_;
  if (len > want - lead) want = round_up(lead + len, page_size());
  const std::uint64_t left = file_size_ - aligned;
  const std::size_t map_len = left < want ? static_cast<std::size_t>(left) : want;

  void* p = ::mmap(nullptr, map_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_,
                   static_cast<off_t>(aligned));
  if (p == MAP_FAILED) {
    error_ = errno;
    offset_ = at;
    return 0;
  }
  ::madvise(p, map_len, MADV_SEQUENTIAL);
  map_base_ = p;
  map_len_ = map_len;
  data_ = static_cast<const std::uint8_t*>(p);
  offset_ = aligned;
  size_ = map_len;
  return map_len - lead;
}

std::size_t ByteWindow::ensure_read(std::uint64_t at, std::size_t len) noexcept {
  if (at < offset_) return 0;  // the input only moves forward
  const std::uint64_t rel = at - offset_;
  if (rel < size_) {
    // Compact: keep the unconsumed tail, which the caller is about to need again.
    const std::size_t drop = static_cast<std::size_t>(rel);
    if (drop > 0) std::memmove(buffer_.get(), buffer_.get() + drop, size_ - drop);
    size_ -= drop;
    offset_ = at;
  } else {
    // Skip forward past bytes the caller never needs to see (a block it ignores).
    std::uint64_t skip = rel - size_;
    offset_ += size_;
    size_ = 0;
    while (skip > 0 && !eof_ && error_ == 0) {
      const std::size_t want = skip < capacity_ ? static_cast<std::size_t>(skip) : capacity_;
      const ssize_t n = ::read(fd_, buffer_.get(), want);
      if (n > 0) {
        offset_ += static_cast<std::uint64_t>(n);
        skip -= static_cast<std::uint64_t>(n);
      } else if (n == 0) {
        eof_ = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd pfd{fd_, POLLIN, 0};
        ::poll(&pfd, 1, -1);
      } else if (errno != EINTR) {
        error_ = errno;
      }
    }
    if (skip > 0) return 0;
  }

  if (len > capacity_) {
    const std::size_t grown = round_up(len, 4096);
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
  while (size_ < len && !eof_ && error_ == 0) {
    const ssize_t n = ::read(fd_, buffer_.get() + size_, capacity_ - size_);
    if (n > 0) {
      size_ += static_cast<std::size_t>(n);
    } else if (n == 0) {
      eof_ = true;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd pfd{fd_, POLLIN, 0};
      ::poll(&pfd, 1, -1);
    } else if (errno != EINTR) {
      error_ = errno;
    }
  }
  return size_;
}

}  // namespace rocehil::capture
