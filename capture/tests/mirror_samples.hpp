#pragma once

// Test helper: frames of every kind the analyzer counts, and every way a remote mirror carries
// them (ERSPAN I, II, III, GRE TEB; over IPv4 and IPv6; with and without sequence numbers).

#include <cstdint>
#include <vector>

#include "addresses.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture::testing {

// Frames of every kind the analyzer counts, each carried every way a mirror carries them.
inline std::vector<std::vector<std::uint8_t>> sample_frames() {
  RoceFrame write;
  write.payload_size = 100;
  RoceFrame tagged_v6;
  tagged_v6.src = doc_v6(1);
  tagged_v6.dst = doc_v6(2);
  tagged_v6.vlans = {{0x8100, 300}};
  tagged_v6.bth.opcode = wire::opcode::rc_acknowledge;
  tagged_v6.aeth.syndrome = 0x61;
  tagged_v6.ecn = wire::ecn_ce;
  return {build(write), build(tagged_v6), build(cnp_frame(v4(198, 18, 0, 2), v4(198, 18, 0, 1), 7)),
          build_pfc(0x08, {0, 0, 0, 0xffff, 0, 0, 0, 0}), build_pause(0x200)};
}

inline std::vector<MirrorWrap> every_wrap() {
  std::vector<MirrorWrap> out;
  for (MirrorKind kind :
       {MirrorKind::erspan1, MirrorKind::erspan2, MirrorKind::erspan3, MirrorKind::gre_teb})
    for (bool v6 : {false, true})
      for (bool sequence : {false, true}) {
        MirrorWrap w;
        w.kind = kind;
        w.with_sequence = sequence;
        w.with_key = kind == MirrorKind::gre_teb && !sequence;
        w.key = 9;
        w.sequence = 77;
        w.session_id = 12;
        w.platform_id = sequence && kind == MirrorKind::erspan3 ? 1 : 0;
        if (v6) {
          w.src = doc_v6(0x5e);
          w.dst = doc_v6(0xc0);
        }
        out.push_back(w);
      }
  return out;
}

// `wrapped`, a mirror over IPv6, with a hop-by-hop options header of `size` bytes (a multiple of
// 8, padding only) between the IPv6 header and GRE: tunnel headers longer than most.
inline std::vector<std::uint8_t> with_hop_by_hop(std::vector<std::uint8_t> wrapped,
                                                 std::size_t size) {
  constexpr std::size_t ip = 14;
  std::vector<std::uint8_t> options(size, 0);  // Pad1 options
  options[0] = wrapped[ip + 6];                // next header: what followed IPv6 (GRE)
  options[1] = static_cast<std::uint8_t>(size / 8 - 1);
  wrapped[ip + 6] = 0;  // hop-by-hop options
  const std::size_t payload = (std::size_t{wrapped[ip + 4]} << 8 | wrapped[ip + 5]) + size;
  wrapped[ip + 4] = static_cast<std::uint8_t>(payload >> 8);
  wrapped[ip + 5] = static_cast<std::uint8_t>(payload);
  wrapped.insert(wrapped.begin() + ip + 40, options.begin(), options.end());
  return wrapped;
}

}  // namespace rocehil::capture::testing
