#pragma once

#include <cstdint>

// The 64-bit wr_id the provider gives libibverbs. The caller's own wr_id stays in the QP's slot
// table; what travels through the NIC says where to find it:
//   bit 63      receive queue (1) or send queue (0)
//   bits 32..62 the QP's index in its CQ's table
//   bits 0..31  the low 32 bits of the WR's position in its queue (positions count from 0)
// Why not pass the caller's wr_id through: an error completion carries only wr_id, status and
// qp_num (its opcode and byte_len are undefined), yet it must report the request's opcode and be
// told apart from a receive; and each completion retires the unsignaled WRs before it, which is
// how post_send knows the send queue's free space without asking the NIC.
namespace rocehil::traffic::verbs::work_id {

inline constexpr std::uint64_t receive_bit = std::uint64_t{1} << 63;
inline constexpr std::uint32_t max_qp_index = 0x7fffffff;

constexpr std::uint64_t encode(bool receive, std::uint32_t qp_index,
                               std::uint64_t position) noexcept {
  return (receive ? receive_bit : 0) | std::uint64_t{qp_index & max_qp_index} << 32 |
         (position & 0xffffffffu);
}
constexpr bool is_receive(std::uint64_t id) noexcept {
  return (id & receive_bit) != 0;
}
constexpr std::uint32_t qp_index(std::uint64_t id) noexcept {
  return static_cast<std::uint32_t>(id >> 32) & max_qp_index;
}
// The full position, given the oldest position still outstanding: queues hold far fewer than
// 2^32 WRs, so the low 32 bits identify it uniquely.
constexpr std::uint64_t position(std::uint64_t id, std::uint64_t oldest) noexcept {
  return oldest + static_cast<std::uint32_t>(static_cast<std::uint32_t>(id) -
                                             static_cast<std::uint32_t>(oldest));
}

}  // namespace rocehil::traffic::verbs::work_id
