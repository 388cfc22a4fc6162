#pragma once

// What a request packet says about its flow's PSN sequence, for the per-frame path
// (analyzer.cpp) and for the replays of a fold (flow_fold.cpp) alike.

#include <algorithm>
#include <cstdint>

#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {

// PSNs a READ REQUEST may reserve for its response: one per packet at the smallest IB MTU,
// because the path MTU is not in the capture. Larger MTUs use fewer, so this never reports a
// gap that was not there; a loss hidden inside that window goes unseen.
inline std::uint32_t read_response_span(std::uint32_t dma_length) {
  constexpr std::uint32_t smallest_mtu = 256;
  const std::uint64_t packets = (std::uint64_t{dma_length} + smallest_mtu - 1) / smallest_mtu;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(packets, 1, 0xffffff));
}

// The PSNs a request occupies: 1, or a READ REQUEST's response span when its RETH is captured.
inline std::uint32_t request_span(std::uint8_t opcode, const std::uint8_t* bth,
                                  std::uint32_t after_bth) {
  namespace w = rocehil::wire;
  if (opcode == w::opcode::rc_read_request && after_bth >= w::reth_size)
    return read_response_span(load_be32(bth + w::bth_size + 12));
  return 1;
}

// Requests whose PSNs form one sequence per flow: those of connected transports (RC, UC). A UD
// QP hears from any number of requester QPs, each with its own PSNs.
inline bool is_connected_request(std::uint8_t opcode) {
  namespace w = rocehil::wire;
  const std::uint8_t transport = w::opcode::transport(opcode);
  return w::opcode::is_request(opcode) &&
         (transport == w::opcode::transport_rc || transport == w::opcode::transport_uc);
}

// A request packet's PSN against the highest one its flow has sent so far (FlowStats says how).
enum class PsnVerdict : std::uint8_t { first, in_order, gap, retransmit };
inline PsnVerdict judge_psn(std::uint32_t highest, std::uint32_t highest_span, std::uint32_t psn) {
  if (highest_span == 0) return PsnVerdict::first;
  const std::int32_t ahead = rocehil::wire::psn_distance(highest, psn);
  if (ahead <= 0) return PsnVerdict::retransmit;
  return static_cast<std::uint32_t>(ahead) > highest_span ? PsnVerdict::gap : PsnVerdict::in_order;
}

}  // namespace rocehil::capture
