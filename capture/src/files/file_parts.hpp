#pragma once

// Reading one capture file in parts, each part by its own FileSource on its own thread
// (file_analysis.cpp). A part starts at a record boundary (pcap) or block boundary (pcapng)
// found by looking for a chain of plausible headers, and stops before the first record that
// starts at or after the next part's start. Neither format marks its boundaries, so a start
// found this way is only a guess: the part before it confirms it by stopping exactly there, and
// file_analysis.cpp reads on sequentially where one does not.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture {

struct FileParts {
  // A source reading `like`'s file (at `path`) from `offset`, which should be a record or block
  // boundary, with `like`'s format state as it is now: byte order, link type and snap length,
  // the pcapng section's interfaces. Its records are numbered from records_before + 1.
  static std::unique_ptr<FileSource> open_at(const std::string& path, const FileSource& like,
                                             std::uint64_t offset, std::uint64_t records_before);

  // Reading stops before the first record or block that starts at or after `offset`.
  static void stop_before(FileSource& source, std::uint64_t offset) noexcept;
  // Whether the source stopped there (and not at the end of the file or at a problem).
  static bool stopped_at_limit(const FileSource& source) noexcept;
  // Lifts the limit of a source that stopped at it: reading goes on to the end of the file.
  static void read_on(FileSource& source) noexcept;
  // The file offset of the next record or block the source would read.
  static std::uint64_t position(const FileSource& source) noexcept;
  // pcapng section headers and interface descriptions the source has read: one read after a
  // part started changes how the parts after it must be read.
  static std::uint64_t header_blocks(const FileSource& source) noexcept;

  // The first offset at or after `from` (and before from + 4 MiB) where `like`'s format has a
  // chain of plausible record headers (or blocks) running to the end of the bytes looked at or
  // of the file; nullopt when there is none. `first_ts_ns` (the file's first record) bounds
  // the timestamps a pcap record header may plausibly have.
  static std::optional<std::uint64_t> find_boundary(const std::string& path, const FileSource& like,
                                                    std::uint64_t from, std::uint64_t first_ts_ns);
};

}  // namespace rocehil::capture
