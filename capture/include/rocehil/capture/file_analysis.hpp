#pragma once

// `rocehil analyze FILE`: a capture file through the Analyzer, by one thread or several. With
// several, the file is cut into parts at record boundaries, each part is read and analysed by
// its own thread, and the parts are folded together in order (Analyzer::append), so the result
// is the one a single thread reading the whole file gives, field for field.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture {

struct FileAnalysisOptions {
  unsigned workers = 1;  // threads reading parts of the file; standard input is read by one
  // A part is at least this large: below it a thread costs more than it saves.
  std::uint64_t min_part_bytes = std::uint64_t{1} << 20;
};

struct FileAnalysis {
  Analysis analysis;
  std::string name;  // as FileSource names it
  FileFormat format = FileFormat::pcap_us;
  std::vector<FileProblem> problems;  // where reading stopped early, as FileSource reports it
  std::uint64_t records = 0;          // packet records read
  unsigned parts = 1;                 // parts read in parallel and folded together
  // A part's guessed start was not a record boundary, or a pcapng section or interface began
  // inside a part: the rest of the file was then read by that part's thread alone.
  bool read_on = false;
};

// Bytes of the file consumed so far and the file's size (0 when unknown). Called on the calling
// thread, about every 100 ms while parts are read in parallel, after every batch otherwise.
using FileProgress = std::function<void(std::uint64_t consumed, std::uint64_t size)>;

// Throws rocehil::Error naming the path when it cannot be opened or is not a capture file
// (FileSource::open). A problem inside the file is not an error: frames before it are analysed
// and the problem is in `problems`.
FileAnalysis analyze_file(const std::string& path, const AnalyzerOptions& options,
                          const FileAnalysisOptions& how = {}, const FileProgress& progress = {});

}  // namespace rocehil::capture
