// The responder side of a soft RC QP: requests are executed strictly in PSN order; a duplicate
// is re-acknowledged (a duplicate READ is answered again, READs being idempotent), a request
// ahead of the expected PSN is dropped with one sequence-error NAK. WRITE and READ check the
// R_Key and the bounds of the target region and NAK with a remote access error otherwise.
#include <cstring>

#include "rocehil/common/roce_wire.hpp"
#include "soft/soft_provider.hpp"
#include "soft/soft_qp.hpp"

namespace rocehil::traffic::soft {

namespace {

namespace o = wire::opcode;

bool starts_message(std::uint8_t op) {
  return op == o::rc_send_first || op == o::rc_send_only || op == o::rc_send_only_imm ||
         op == o::rc_write_first || op == o::rc_write_only || op == o::rc_write_only_imm;
}
bool ends_message(std::uint8_t op) {
  return op == o::rc_send_last || op == o::rc_send_last_imm || op == o::rc_send_only ||
         op == o::rc_send_only_imm || op == o::rc_write_last || op == o::rc_write_last_imm ||
         op == o::rc_write_only || op == o::rc_write_only_imm;
}
bool is_send(std::uint8_t op) {
  return op <= o::rc_send_only_imm;
}

// The memory region a RETH names, if its key and the whole range are valid.
const MemoryRegion* target_region(const SoftProvider& provider, const Reth& reth) {
  const MemoryRegion* mr = provider.find_rkey(reth.rkey);
  if (mr == nullptr) return nullptr;
  const std::uint64_t begin = mr->remote_address, end = begin + mr->length;
  if (reth.va < begin || reth.va > end || reth.length > end - reth.va) return nullptr;
  return mr;
}

}  // namespace

void SoftQp::on_request(const DecodedPacket& p, std::uint64_t now) noexcept {
  const std::uint8_t op = p.headers.bth.opcode;
  const std::uint32_t psn = p.headers.bth.psn;
  const std::int32_t ahead = wire::psn_distance(epsn_, psn);
  if (ahead < 0) {
    // A duplicate: our ACK was lost or the requester went back. Answer again.
    if (op == o::rc_read_request) answer_read(p, psn);
    ++unacked_;
    return;
  }
  if (ahead > 0) {
    ++counters_.out_of_sequence;
    if (!nak_sent_) {
      send_nak(wire::aeth::nak_psn_sequence_error, epsn_);
      nak_sent_ = true;
    }
    return;
  }
  if (op == o::rc_read_request) {
    const std::uint32_t packets = wire::packets_for_length(p.headers.reth.length, mtu_);
    if (target_region(provider_, p.headers.reth) == nullptr) {
      send_nak(wire::aeth::nak_remote_access_error, psn);
      return;
    }
    answer_read(p, psn);
    epsn_ = wire::psn_add(epsn_, packets);
    nak_sent_ = false;
    return;
  }
  const bool placed = is_send(op) ? place_send(p) : place_write(p);
  if (!placed) return;  // NAKed; the PSN does not advance
  epsn_ = wire::psn_add(epsn_, 1);
  nak_sent_ = false;
  ++unacked_;
  if ((p.headers.bth.ack_request || unacked_ >= limits_.ack_every_packets) && !paused(now))
    send_ack();
}

bool SoftQp::place_write(const DecodedPacket& p) noexcept {
  const std::uint8_t op = p.headers.bth.opcode;
  if (starts_message(op)) {
    const MemoryRegion* mr = target_region(provider_, p.headers.reth);
    if (mr == nullptr) {
      send_nak(wire::aeth::nak_remote_access_error, p.headers.bth.psn);
      return false;
    }
    write_cursor_ = mr->data + (p.headers.reth.va - mr->remote_address);
    write_remaining_ = p.headers.reth.length;
    message_bytes_ = 0;
    in_message_ = true;
  } else if (!in_message_ || message_is_send_) {
    send_nak(wire::aeth::nak_invalid_request, p.headers.bth.psn);
    return false;
  }
  message_is_send_ = false;
  if (p.payload.size() > write_remaining_) {
    send_nak(wire::aeth::nak_invalid_request, p.headers.bth.psn);
    return false;
  }
  const bool with_imm = op == o::rc_write_last_imm || op == o::rc_write_only_imm;
  if (with_imm && rq_count_ == 0) {
    send_nak(0x20 | 0x01, p.headers.bth.psn);  // RNR NAK: no receive to consume
    return false;
  }
  std::memcpy(write_cursor_, p.payload.data(), p.payload.size());
  write_cursor_ += p.payload.size();
  write_remaining_ -= p.payload.size();
  message_bytes_ += static_cast<std::uint32_t>(p.payload.size());
  if (ends_message(op)) {
    in_message_ = false;
    msn_ = wire::psn_add(msn_, 1);
    if (with_imm) {
      const RecvRequest r = rq_[rq_head_];
      rq_head_ = (rq_head_ + 1) % rq_.size();
      --rq_count_;
      Completion c;
      c.wr_id = r.wr_id;
      c.opcode = Opcode::recv;
      c.qpn = qpn_;
      c.byte_len = message_bytes_;
      c.has_imm = true;
      c.imm = p.headers.immdt;
      push_completion(c);
    }
  }
  return true;
}

bool SoftQp::place_send(const DecodedPacket& p) noexcept {
  const std::uint8_t op = p.headers.bth.opcode;
  if (starts_message(op)) {
    if (rq_count_ == 0) {
      send_nak(0x20 | 0x01, p.headers.bth.psn);  // RNR NAK
      return false;
    }
    current_recv_ = rq_[rq_head_];
    rq_head_ = (rq_head_ + 1) % rq_.size();
    --rq_count_;
    message_bytes_ = 0;
    in_message_ = true;
    message_is_send_ = true;
  } else if (!in_message_ || !message_is_send_) {
    send_nak(wire::aeth::nak_invalid_request, p.headers.bth.psn);
    return false;
  }
  Completion c;
  c.wr_id = current_recv_.wr_id;
  c.opcode = Opcode::recv;
  c.qpn = qpn_;
  if (message_bytes_ + p.payload.size() > current_recv_.length) {
    // The receive buffer is too small: the responder's receive fails and the requester is told.
    in_message_ = false;
    c.status = WcStatus::local_length_error;
    push_completion(c);
    send_nak(wire::aeth::nak_invalid_request, p.headers.bth.psn);
    return false;
  }
  if (!p.payload.empty())
    std::memcpy(current_recv_.local->data + current_recv_.local_offset + message_bytes_,
                p.payload.data(), p.payload.size());
  message_bytes_ += static_cast<std::uint32_t>(p.payload.size());
  if (ends_message(op)) {
    in_message_ = false;
    msn_ = wire::psn_add(msn_, 1);
    c.byte_len = message_bytes_;
    c.has_imm = op == o::rc_send_last_imm || op == o::rc_send_only_imm;
    c.imm = c.has_imm ? p.headers.immdt : 0;
    push_completion(c);
  }
  return true;
}

void SoftQp::answer_read(const DecodedPacket& p, std::uint32_t psn) noexcept {
  const MemoryRegion* mr = target_region(provider_, p.headers.reth);
  if (mr == nullptr) return;
  const std::uint64_t length = p.headers.reth.length;
  const std::uint32_t packets = wire::packets_for_length(length, mtu_);
  const std::byte* source = mr->data + (p.headers.reth.va - mr->remote_address);
  msn_ = wire::psn_add(msn_, 1);
  for (std::uint32_t i = 0; i < packets; ++i) {
    PacketHeaders h{};
    h.bth.opcode = packets == 1       ? o::rc_read_response_only
                   : i == 0           ? o::rc_read_response_first
                   : i + 1 == packets ? o::rc_read_response_last
                                      : o::rc_read_response_middle;
    h.bth.dest_qp = remote_qpn_;
    h.bth.psn = wire::psn_add(psn, i);
    h.bth.pkey = 0xffff;
    h.aeth = {0x1f, msn_};
    const std::uint64_t offset = static_cast<std::uint64_t>(i) * mtu_;
    const std::size_t bytes =
        static_cast<std::size_t>(std::min<std::uint64_t>(mtu_, length - offset));
    const std::span<const std::uint8_t> payload(
        reinterpret_cast<const std::uint8_t*>(source + offset), bytes);
    h.bth.pad_count = pad_for(bytes);
    send_packet(h, payload);
  }
}

void SoftQp::send_ack() noexcept {
  PacketHeaders h{};
  h.bth.opcode = o::rc_acknowledge;
  h.bth.dest_qp = remote_qpn_;
  h.bth.psn = wire::psn_add(epsn_, 0xffffffu);  // the last request executed
  h.bth.pkey = 0xffff;
  h.aeth = {0x1f, msn_};  // ACK; 0x1f: no end-to-end credits advertised
  send_packet(h, {});
  unacked_ = 0;
}

void SoftQp::send_nak(std::uint8_t syndrome, std::uint32_t psn) noexcept {
  PacketHeaders h{};
  h.bth.opcode = o::rc_acknowledge;
  h.bth.dest_qp = remote_qpn_;
  h.bth.psn = psn;
  h.bth.pkey = 0xffff;
  h.aeth = {syndrome, msn_};
  send_packet(h, {});
  ++counters_.naks_sent;
  // A remote access, invalid request or operational error is fatal to the responder QP too:
  // it enters the error state and ignores the rest of the stream, as an RNIC's does.
  if (wire::aeth::is_nak(syndrome) && syndrome != wire::aeth::nak_psn_sequence_error)
    fail(WcStatus::flushed);
}

void SoftQp::send_cnp(std::uint64_t now) noexcept {
  // CNPs carry the CNP DSCP, so their priority's pause holds them. A CNP is a notification,
  // not data: one that cannot leave is not kept; the next CE mark after the pause asks again.
  if (!connected_ || provider_.pfc().paused(provider_.cnp_priority(), now) ||
      !cnp_limiter_.should_send(now))
    return;
  PacketHeaders h{};
  h.bth.opcode = o::cnp;
  h.bth.dest_qp = remote_qpn_;
  h.bth.becn = true;
  h.bth.pkey = 0xffff;
  static constexpr std::array<std::uint8_t, wire::cnp_reserved_size> reserved{};
  send_cnp_packet(h, reserved);
  ++counters_.cnps_sent;
}

}  // namespace rocehil::traffic::soft
