#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocehil/capture/frame_source.hpp"

namespace rocehil::capture {

enum class FileFormat { pcap_us, pcap_ns, pcapng };
const char* to_string(FileFormat format);

// Something wrong with the file that stopped reading before its end. Frames before it were
// delivered; the reader never guesses past a damaged record.
struct FileProblem {
  enum class Kind {
    truncated,  // the file ends inside a record (a capture killed mid-write)
    corrupt,    // a record header that cannot be right (length beyond the block, bad block type)
  };
  Kind kind;
  std::uint64_t offset;  // byte offset of the record or block where reading stopped
  std::uint64_t record;  // 1-based index of that record among packet records
  std::string detail;    // e.g. "captured length 70000 exceeds the snap length 65535"
};

// An interface a pcapng file describes (an interface description block), in file order across
// its sections: what the analysis needs to know of the link it was captured on.
struct FileInterface {
  std::uint32_t section = 0;    // 0 for the first section
  std::uint32_t index = 0;      // its interface ID within the section
  std::string name;             // if_name, when given
  std::uint64_t speed_bps = 0;  // if_speed; 0 when the file does not say
};

// Reads pcap (microsecond and nanosecond, either byte order) and pcapng (any number of sections
// and interfaces, either byte order, if_tsresol and if_tsoffset, EPB, SPB and the obsolete PB).
// Every input (regular file, pipe, FIFO, standard input) is read with read() into one small
// reused buffer, so resident memory stays bounded however large the file is; with the page cache
// warm this is also faster than mapping, because the copied bytes are still in cache when they
// are decoded. No allocation per frame.
class FileSource final : public FrameSource {
 public:
  // Throws rocehil::Error naming the path when it cannot be opened or is not a capture file.
  // "-" reads standard input.
  static std::unique_ptr<FileSource> open(const std::string& path);
  // Reads from bytes the caller keeps alive (tests, fuzzing). `name` appears in messages.
  static std::unique_ptr<FileSource> from_memory(std::span<const std::uint8_t> bytes,
                                                 const std::string& name = "<memory>");

  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  std::size_t next_batch(std::span<Frame> out) override;

  FileFormat format() const noexcept;
  const std::string& name() const noexcept;
  // Packet records delivered so far.
  std::uint64_t records() const noexcept;
  // For progress: bytes of the file consumed so far, and its size (0 when unknown, as for a pipe).
  std::uint64_t bytes_consumed() const noexcept;
  std::uint64_t size_hint() const noexcept;
  // Set once reading stopped early; empty while the file reads cleanly.
  const std::vector<FileProblem>& problems() const noexcept;
  // The pcapng interfaces read so far (those of the blocks before the last frame delivered);
  // empty for pcap, which has none.
  const std::vector<FileInterface>& interfaces() const noexcept;

  struct Impl;

 private:
  friend struct FileParts;  // reading a file in parts (src/file_parts.hpp)
  explicit FileSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocehil::capture
