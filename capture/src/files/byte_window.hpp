#pragma once

// Byte access for the capture file reader: a forward-moving view onto a file, a pipe or a
// caller's buffer. The reader asks for a byte range; the window makes it visible by reading into
// a small reused buffer and compacting it (files, pipes, standard input) or not at all (memory).
// Keeping both behind one small interface lets the record parser be written once, with its hot
// loop working on plain pointers between refills.
//
// Why read() and not mmap() for regular files: with the page cache warm, reading a 280 MB,
// 2M-frame capture through a 256 KiB buffer was ~10% faster end to end than 64 MiB
// MAP_POPULATE windows (0.174 s against 0.192 s; a 100k-QP capture 0.50 s against 0.59 s).
// The copy leaves the bytes in L2 just before the decoder reads them, and the page-table work
// of populating and unmapping windows disappears. Peak RSS fell from ~72 MB to under 12 MB.
// One path for every kind of input is also one path to test.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace rocehil::capture {

class FileSource;

// Options so tests can use buffers of a few KiB and cross buffer boundaries inside small
// files; production uses the defaults.
struct WindowOptions {
  // Initial buffer size. Big enough that the per-read() cost is spread over a few thousand
  // records, small enough that the buffer stays in L2 between the copy and the decoder. The
  // buffer grows only to hold a single record larger than this, so resident memory stays near
  // it however large the input is.
  std::size_t read_bytes = std::size_t{256} << 10;
};

class ByteWindow {
 public:
  // Opens `path` ("-" is standard input). Throws rocehil::Error naming `display_name` when the
  // path cannot be opened or is a directory.
  static ByteWindow open(const std::string& path, const std::string& display_name,
                         const WindowOptions& options);
  // The caller keeps `bytes` alive as long as the window.
  static ByteWindow memory(std::span<const std::uint8_t> bytes);

  ByteWindow(ByteWindow&& other) noexcept;
  ByteWindow& operator=(ByteWindow&&) = delete;
  ByteWindow(const ByteWindow&) = delete;
  ByteWindow& operator=(const ByteWindow&) = delete;
  ~ByteWindow();

  // The visible bytes: [data(), data() + size()) are the input's bytes at [offset(), offset() +
  // size()).
  const std::uint8_t* data() const noexcept { return data_; }
  std::uint64_t offset() const noexcept { return offset_; }
  std::size_t size() const noexcept { return size_; }

  // Makes the input's bytes [at, at + len) visible when the input has them, and returns how many
  // bytes are visible from `at` on: at least `len`, or fewer when the input ends (or fails)
  // first. Pointers obtained before the call are invalid after it. `at` never moves backwards
  // past offset(). Never throws; a failed system call is kept in error().
  std::size_t ensure(std::uint64_t at, std::size_t len) noexcept;

  // errno of a failed read (or of a buffer that could not grow), 0 when the input simply ended.
  int error() const noexcept { return error_; }
  // Size of the input when known in advance (regular files and memory), 0 for pipes and for
  // regular files that report no size (procfs and the like). Only used for progress.
  std::uint64_t input_size() const noexcept { return input_size_; }
  // Bytes the read buffer holds room for (0 for memory); tests check it stays bounded.
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  enum class Mode { memory, read };
  ByteWindow() = default;

  std::size_t ensure_read(std::uint64_t at, std::size_t len) noexcept;
  // Moves the input forward by `skip` bytes without showing them; false when the input ended
  // or failed first.
  bool skip_forward(std::uint64_t skip) noexcept;
  // Waits for a non-blocking descriptor that had nothing to read.
  void wait_readable() const noexcept;
  // One read() into `dst`: the bytes it gave, or 0 having set eof_ or error_ (or waited for a
  // non-blocking input, or been interrupted: the caller's loop simply tries again).
  std::size_t read_some(std::uint8_t* dst, std::size_t want) noexcept;

  Mode mode_ = Mode::memory;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool seekable_ = false;  // a regular file: skips may lseek() instead of reading through
  std::uint64_t input_size_ = 0;

  const std::uint8_t* data_ = nullptr;
  std::uint64_t offset_ = 0;
  std::size_t size_ = 0;

  std::unique_ptr<std::uint8_t[]> buffer_;  // read mode: the view is buffer_[0, size_)
  std::size_t capacity_ = 0;
  bool eof_ = false;

  int error_ = 0;
};

// Test hook, defined in file_source.cpp: FileSource::open with an explicit buffer size.
std::unique_ptr<FileSource> open_file_source(const std::string& path, const WindowOptions& options);

}  // namespace rocehil::capture
