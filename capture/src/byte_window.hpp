#pragma once

// Byte access for the capture file reader: a forward-moving view onto a file, a pipe or a
// caller's buffer. The reader asks for a byte range; the window makes it visible by remapping
// (regular files), reading and compacting (pipes, standard input) or not at all (memory). Keeping
// the three behind one small interface lets the record parser be written once, with its hot loop
// working on plain pointers between refills.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace rocehil::capture {

class FileSource;

// Sizes are options so tests can use windows of a few KiB and cross window boundaries inside
// small files; production uses the defaults.
struct WindowOptions {
  // Bytes mapped at once from a regular file. Resident memory stays near this however large the
  // file is, because the previous window is unmapped before the next one is mapped.
  std::size_t map_bytes = std::size_t{64} << 20;
  // Buffer for inputs that cannot be mapped (pipes, FIFOs, terminals, standard input).
  std::size_t read_bytes = std::size_t{4} << 20;
  // Read regular files through the buffer too (tests of the read path on ordinary files).
  bool force_read = false;
};

class ByteWindow {
 public:
  // Opens `path` ("-" is standard input). Throws rocehil::Error naming `display_name` when the
  // path cannot be opened. Chooses mapping for regular files and reading otherwise.
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

  // errno of a failed read or mmap, 0 when the input simply ended.
  int error() const noexcept { return error_; }
  bool mapped() const noexcept { return mode_ == Mode::map; }
  // Size of the input when known in advance (files and memory), 0 for pipes.
  std::uint64_t input_size() const noexcept { return mode_ == Mode::read ? 0 : file_size_; }
  // Bytes currently mapped from the file (0 unless mapped()); tests check it stays bounded.
  std::size_t mapped_bytes() const noexcept { return map_len_; }

 private:
  enum class Mode { memory, map, read };
  ByteWindow() = default;

  std::size_t ensure_map(std::uint64_t at, std::size_t len) noexcept;
  std::size_t ensure_read(std::uint64_t at, std::size_t len) noexcept;
  void unmap() noexcept;

  Mode mode_ = Mode::memory;
  int fd_ = -1;
  bool owns_fd_ = false;
  std::uint64_t file_size_ = 0;  // map and memory modes
  std::size_t window_ = 0;       // map: preferred mapping length; read: preferred buffer size

  const std::uint8_t* data_ = nullptr;
  std::uint64_t offset_ = 0;
  std::size_t size_ = 0;

  void* map_base_ = nullptr;  // map mode: the mapping, which is also the view
  std::size_t map_len_ = 0;

  std::unique_ptr<std::uint8_t[]> buffer_;  // read mode: the view is buffer_[0, size_)
  std::size_t capacity_ = 0;
  bool eof_ = false;

  int error_ = 0;
};

// Test hook, defined in file_source.cpp: FileSource::open with explicit window sizes.
std::unique_ptr<FileSource> open_file_source(const std::string& path, const WindowOptions& options);

}  // namespace rocehil::capture
