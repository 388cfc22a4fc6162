// libFuzzer target: any byte string as a capture file. The reader must never read outside the
// input, never throw from next_batch, and hand the analyzer only frames whose bytes exist.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/common/error.hpp"

namespace cap = rocehil::capture;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::unique_ptr<cap::FileSource> source;
  try {
    source = cap::FileSource::from_memory(std::span(data, size), "fuzz");
  } catch (const rocehil::Error&) {
    return 0;  // not a capture file: refusing it is the right answer
  }

  cap::Analyzer analyzer;
  // A small batch so records straddle batch boundaries.
  std::array<cap::Frame, 3> batch;
  std::uint64_t frames = 0;
  volatile std::uint8_t sink = 0;
  while (const std::size_t n = source->next_batch(batch)) {
    for (std::size_t i = 0; i < n; ++i) {
      const cap::Frame& f = batch[i];
      // Touch the first and last captured byte: ASan reports a frame that points past its data.
      if (f.caplen > 0) sink = static_cast<std::uint8_t>(sink ^ f.data[0] ^ f.data[f.caplen - 1]);
      if (f.caplen > f.wire_len) __builtin_trap();  // file_source.cpp promises caplen <= wire_len
    }
    analyzer.add(std::span<const cap::Frame>(batch.data(), n));
    frames += n;
  }
  if (frames != source->records()) __builtin_trap();
  for (const cap::FileProblem& p : source->problems())
    sink = static_cast<std::uint8_t>(sink ^ p.detail.size());
  sink = static_cast<std::uint8_t>(sink ^ source->bytes_consumed() ^ source->size_hint());
  (void)cap::to_string(source->format());
  // Whatever the file, the report must be valid JSON: parse throws (and the fuzzer stops) if not.
  sink = static_cast<std::uint8_t>(
      sink ^ nlohmann::json::parse(cap::to_json_text(analyzer.result())).size());
  return 0;
}
