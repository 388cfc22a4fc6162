// The requester side of a soft RC QP: it segments posted requests into MTU packets with
// consecutive PSNs, sends them paced by the DCQCN reaction point, retires them on ACKs and READ
// responses, and goes back N on a sequence NAK or when no progress happens within the ACK
// timeout, until the retry count runs out.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rocehil/common/roce_wire.hpp"
#include "soft/soft_provider.hpp"
#include "soft/soft_qp.hpp"

namespace rocehil::traffic::soft {

namespace {

std::uint8_t request_opcode(Opcode op, std::uint32_t index, std::uint32_t packets) {
  namespace o = wire::opcode;
  const bool first = index == 0, last = index + 1 == packets, only = packets == 1;
  switch (op) {
    case Opcode::send:
      return only    ? o::rc_send_only
             : first ? o::rc_send_first
             : last  ? o::rc_send_last
                     : o::rc_send_middle;
    case Opcode::send_with_imm:
      return only    ? o::rc_send_only_imm
             : first ? o::rc_send_first
             : last  ? o::rc_send_last_imm
                     : o::rc_send_middle;
    case Opcode::write:
      return only    ? o::rc_write_only
             : first ? o::rc_write_first
             : last  ? o::rc_write_last
                     : o::rc_write_middle;
    case Opcode::write_with_imm:
      return only    ? o::rc_write_only_imm
             : first ? o::rc_write_first
             : last  ? o::rc_write_last_imm
                     : o::rc_write_middle;
    default: return o::rc_read_request;
  }
}

}  // namespace

void SoftQp::transmit(std::uint64_t now) noexcept {
  while (cursor_wqe_ < sq_count_) {
    if (now < next_send_ns_) return;           // paced by the current DCQCN rate
    if (now < limit_due_ns_) return;           // and by the QP's rate limit
    if (!provider_.port().ready(now)) return;  // and by the port all QPs share
    if (paused(now)) return;                   // and by PFC for the QP's priority
    SendWqe& w = wqe_at(cursor_wqe_);
    const std::uint32_t psn = wire::psn_add(w.first_psn, cursor_packet_);
    if (wire::psn_distance(oldest_unacked(), psn) >=
        static_cast<std::int32_t>(limits_.max_outstanding_packets))
      return;
    // A READ waits while earlier responses are due and its own would exceed the READ window.
    if (w.wr.opcode == Opcode::read && oldest_unacked() != psn &&
        wire::psn_distance(oldest_unacked(), wire::psn_add(psn, w.packets)) >
            static_cast<std::int32_t>(limits_.max_outstanding_read_packets))
      return;
    // The ACK timer runs from the first packet of a flight: after an idle spell the time of the
    // last progress is old, and would fire a retransmission at once.
    if (last_progress_ns_ == 0 || psn == oldest_unacked()) last_progress_ns_ = now;
    send_request_packet(w, cursor_packet_, now);
    if (!sent_any_ || wire::psn_distance(highest_sent_psn_, psn) > 0) {
      highest_sent_psn_ = psn;
      sent_any_ = true;
    }
    // A READ request is one packet however many PSNs its responses use.
    if (w.wr.opcode == Opcode::read || ++cursor_packet_ == w.packets) {
      ++cursor_wqe_;
      cursor_packet_ = 0;
    }
  }
}

std::uint32_t SoftQp::oldest_unacked() const noexcept {
  if (sq_count_ == 0) return next_psn_;
  const SendWqe& head = wqe_at(0);
  if (head.wr.opcode == Opcode::read) return wire::psn_add(head.first_psn, head.read_received);
  return wire::psn_distance(head.first_psn, acked_until_) > 0 ? acked_until_ : head.first_psn;
}

std::uint32_t SoftQp::cursor_psn() const noexcept {
  if (cursor_wqe_ >= sq_count_) return next_psn_;
  return wire::psn_add(wqe_at(cursor_wqe_).first_psn, cursor_packet_);
}

void SoftQp::send_request_packet(SendWqe& w, std::uint32_t index, std::uint64_t now) noexcept {
  const SendRequest& wr = w.wr;
  const std::uint32_t psn = wire::psn_add(w.first_psn, index);
  if (sent_any_ && wire::psn_distance(highest_sent_psn_, psn) <= 0)
    ++counters_.retransmitted_packets;
  PacketHeaders h{};
  h.bth.opcode = request_opcode(wr.opcode, index, w.packets);
  h.bth.dest_qp = remote_qpn_;
  h.bth.psn = psn;
  h.bth.pkey = 0xffff;
  const bool last = wr.opcode == Opcode::read || index + 1 == w.packets;
  h.bth.ack_request = last || (index + 1) % limits_.ack_request_every == 0;
  h.bth.solicited =
      last && (wr.opcode == Opcode::send_with_imm || wr.opcode == Opcode::write_with_imm);
  std::span<const std::uint8_t> payload;
  if (wr.opcode == Opcode::read) {
    // A request resumed after a loss asks only for what is missing.
    const std::uint64_t skip = static_cast<std::uint64_t>(index) * mtu_;
    h.reth = {wr.remote_address + skip, wr.rkey, static_cast<std::uint32_t>(wr.length - skip)};
  } else {
    const std::uint64_t offset = static_cast<std::uint64_t>(index) * mtu_;
    const auto bytes = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(mtu_, wr.length - std::min<std::uint64_t>(offset, wr.length)));
    if (bytes > 0)
      payload = {reinterpret_cast<const std::uint8_t*>(wr.local->data + wr.local_offset + offset),
                 bytes};
    if (index == 0) h.reth = {wr.remote_address, wr.rkey, wr.length};
    h.immdt = wr.imm;
  }
  h.bth.pad_count = pad_for(payload.size());
  send_packet(h, payload);
  const std::uint32_t wire_bytes =
      static_cast<std::uint32_t>(headers_size(h.bth.opcode) + payload.size() + 4);
  rate_.on_bytes_sent(wire_bytes, now);
  provider_.port().on_sent(wire_bytes, now);
  if (rate_.limited()) next_send_ns_ = now + rate_.transmit_gap_ns(wire_bytes);
  if (limit_ps_per_byte_ != 0) {
    // Kept to its schedule, not to when the loop came round: a loop that ran late sends what
    // it owes at once, up to limit_catch_up_ns of it (the burst a pacer lets through), so a
    // sender descheduled for a moment still holds its rate.
    constexpr std::uint64_t limit_catch_up_ns = 2'000'000;
    const std::uint64_t gap =
        std::max<std::uint64_t>(payload.size(), 1) * limit_ps_per_byte_ / 1000;
    limit_due_ns_ = std::max(limit_due_ns_, now - std::min(now, limit_catch_up_ns)) + gap;
  }
}

std::string SoftQp::limit_rate(double bits_per_s) {
  if (!std::isfinite(bits_per_s) || bits_per_s < 0)
    return fmt::format("{} bit/s is not a rate", bits_per_s);
  if (bits_per_s > 0 && bits_per_s < 1000)
    return fmt::format("{} bit/s is below the 1 kbit/s a rate limiter takes", bits_per_s);
  limit_ps_per_byte_ =
      bits_per_s == 0 ? 0 : static_cast<std::uint64_t>(std::llround(8e12 / bits_per_s));
  limit_due_ns_ = 0;
  return {};
}

void SoftQp::go_back_to(std::uint32_t psn) noexcept {
  // Find the WQE holding `psn` and restart transmission there; everything after it follows.
  for (std::uint32_t i = 0; i < sq_count_; ++i) {
    SendWqe& w = wqe_at(i);
    const std::int32_t into = wire::psn_distance(w.first_psn, psn);
    if (into >= 0 && static_cast<std::uint32_t>(into) < w.packets) {
      cursor_wqe_ = i;
      cursor_packet_ = static_cast<std::uint32_t>(into);
      if (w.wr.opcode == Opcode::read) cursor_packet_ = w.read_received;
      return;
    }
  }
}

void SoftQp::on_ack(const DecodedPacket& p, std::uint64_t now) noexcept {
  const Aeth& aeth = p.headers.aeth;
  const std::uint32_t psn = p.headers.bth.psn;
  if (wire::aeth::is_ack(aeth.syndrome)) {
    acknowledge_through(psn, now);
    return;
  }
  ++counters_.naks_received;
  if (wire::aeth::is_rnr_nak(aeth.syndrome)) {
    // Receiver not ready: try again from there after a timeout's worth of time.
    acknowledge_through(wire::psn_add(psn, 0xffffffu), now);
    next_send_ns_ = now + static_cast<std::uint64_t>(options_.ack_timeout_us) * 1000;
    go_back_to(psn);
    return;
  }
  switch (aeth.syndrome) {
    case wire::aeth::nak_psn_sequence_error:
      // Everything before `psn` arrived; resend from it.
      acknowledge_through(wire::psn_add(psn, 0xffffffu), now);
      go_back_to(psn);
      return;
    case wire::aeth::nak_remote_access_error:
      acknowledge_through(wire::psn_add(psn, 0xffffffu), now);
      fail(WcStatus::remote_access_error);
      return;
    default:
      acknowledge_through(wire::psn_add(psn, 0xffffffu), now);
      fail(WcStatus::remote_invalid_request);
      return;
  }
}

void SoftQp::acknowledge_through(std::uint32_t psn, std::uint64_t now) noexcept {
  const std::uint32_t covered = wire::psn_add(psn, 1);
  if (wire::psn_distance(acked_until_, covered) > 0 &&
      wire::psn_distance(covered, next_psn_) >= 0) {
    acked_until_ = covered;
    last_progress_ns_ = now;
    retries_left_ = options_.retry_count;
  }
  // Retire whole requests whose last PSN is covered; a READ retires only with its data.
  while (sq_count_ > 0) {
    const SendWqe& w = wqe_at(0);
    if (w.wr.opcode == Opcode::read) break;
    const std::uint32_t last = wire::psn_add(w.first_psn, w.packets - 1);
    if (wire::psn_distance(last, acked_until_) <= 0) break;
    complete_head(WcStatus::success);
  }
}

void SoftQp::on_read_response(const DecodedPacket& p, std::uint64_t now) noexcept {
  if (sq_count_ == 0) return;
  SendWqe& w = wqe_at(0);
  if (w.wr.opcode != Opcode::read) return;  // a stale response to a finished READ
  const std::uint32_t expected = wire::psn_add(w.first_psn, w.read_received);
  const std::uint32_t psn = p.headers.bth.psn;
  if (psn != expected) {
    // A response went missing: ask again for the rest, once per missing PSN.
    if (wire::psn_distance(expected, psn) > 0 && last_read_retry_psn_ != expected) {
      last_read_retry_psn_ = expected;
      ++counters_.out_of_sequence;
      go_back_to(expected);
    }
    return;
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(w.read_received) * mtu_;
  const std::size_t bytes = std::min<std::size_t>(p.payload.size(), w.wr.length - offset);
  std::memcpy(w.wr.local->data + w.wr.local_offset + offset, p.payload.data(), bytes);
  ++w.read_received;
  last_progress_ns_ = now;
  retries_left_ = options_.retry_count;
  if (w.read_received == w.packets) {
    complete_head(WcStatus::success);
    // A READ response acknowledges every request before it; those behind it retire too.
    acknowledge_through(psn, now);
  }
}

void SoftQp::complete_head(WcStatus status) noexcept {
  SendWqe& w = wqe_at(0);
  if (w.wr.signaled || status != WcStatus::success) {
    Completion c;
    c.wr_id = w.wr.wr_id;
    c.status = status;
    c.opcode = w.wr.opcode;
    c.qpn = qpn_;
    c.byte_len = w.wr.length;
    push_completion(c);
  }
  sq_head_ = (sq_head_ + 1) % sq_.size();
  --sq_count_;
  if (cursor_wqe_ > 0)
    --cursor_wqe_;
  else
    cursor_packet_ = 0;
}

void SoftQp::fail(WcStatus first_status) noexcept {
  // The failing request completes with its error, every other one is flushed, and the QP stays
  // in the error state, as a verbs QP does.
  error_ = true;
  if (sq_count_ > 0) complete_head(first_status);
  while (sq_count_ > 0) complete_head(WcStatus::flushed);
  while (rq_count_ > 0) {
    Completion c;
    c.wr_id = rq_[rq_head_].wr_id;
    c.status = WcStatus::flushed;
    c.opcode = Opcode::recv;
    c.qpn = qpn_;
    push_completion(c);
    rq_head_ = (rq_head_ + 1) % rq_.size();
    --rq_count_;
  }
}

void SoftQp::check_timeout(std::uint64_t now) noexcept {
  const std::uint32_t oldest = oldest_unacked();
  if (sq_count_ == 0 || wire::psn_distance(oldest, cursor_psn()) <= 0) return;  // nothing in flight
  const std::uint64_t timeout = static_cast<std::uint64_t>(options_.ack_timeout_us) * 1000;
  if (now - last_progress_ns_ < timeout) return;
  ++counters_.timeouts;
  if (retries_left_ == 0) {
    fail(WcStatus::retry_exceeded);
    return;
  }
  --retries_left_;
  last_progress_ns_ = now;
  go_back_to(oldest);
}

}  // namespace rocehil::traffic::soft
