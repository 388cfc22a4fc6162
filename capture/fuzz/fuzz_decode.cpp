// libFuzzer target: any byte string as one captured Ethernet frame. The decoder must stay inside
// `caplen` bytes whatever the headers claim, and the analyzer and its JSON form must take
// whatever the decoder produced.

#include <cstddef>
#include <cstdint>
#include <string>

#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/decode.hpp"

namespace cap = rocehil::capture;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 262144) return -1;  // no capture format holds a longer record
  const auto caplen = static_cast<std::uint32_t>(size);

  cap::DecodedFrame d;
  cap::decode_ethernet(data, caplen, d);
  // Formatting reads every byte of the addresses; a name lookup must accept any opcode.
  volatile std::size_t sink = d.src.to_string().size() + d.dst.to_string().size();
  sink = sink + (cap::opcode_name(d.bth.opcode) != nullptr);

  cap::Analyzer analyzer;
  // A snap length cut the frame (wire length beyond caplen), then the whole frame again later:
  // both paths through the flow and PSN bookkeeping.
  cap::Frame f{.ts_ns = 1'000'000'000, .caplen = caplen, .wire_len = caplen + 4096, .data = data};
  analyzer.add(f);
  f.ts_ns += 2'000'000;
  f.wire_len = caplen;
  analyzer.add(f);
  const cap::Analysis a = analyzer.result();
  // Whatever the bytes, the report must be valid JSON: parse throws (and the fuzzer stops) if not.
  sink = sink + nlohmann::json::parse(cap::to_json_text(a)).size();
  (void)sink;
  return 0;
}
