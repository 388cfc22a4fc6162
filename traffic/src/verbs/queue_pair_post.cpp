// Queue pair data path: post lists and completions. Nothing here allocates or throws.
#include <arpa/inet.h>

#include <cerrno>

#include "verbs/mapping.hpp"
#include "verbs/queue_pair.hpp"
#include "verbs/work_id.hpp"

namespace rocehil::traffic::verbs {

namespace {

// True when [offset, offset + length) lies inside the region (written so it cannot overflow).
bool inside(const MemoryRegion& region, std::uint64_t offset, std::uint32_t length) noexcept {
  return offset <= region.length && length <= region.length - offset;
}

}  // namespace

bool VerbsQueuePair::fill_send(const SendRequest& request, std::uint64_t position, ibv_send_wr& wr,
                               ibv_sge& sge) noexcept {
  const std::optional<ibv_wr_opcode> opcode = to_wr_opcode(request.opcode);
  if (!opcode || request.local == nullptr ||
      !inside(*request.local, request.local_offset, request.length)) {
    return false;
  }
  const bool ud = options_.type == QpType::ud;
  if (ud && ((request.opcode != Opcode::send && request.opcode != Opcode::send_with_imm) ||
             request.length > ud_max_message_)) {
    return false;
  }
  // The SGE address is the region's I/O virtual address, which for host memory is its address
  // and for GPU memory the device pointer (MemoryRegion::data is null there).
  sge.addr = request.local->remote_address + request.local_offset;
  sge.length = request.length;
  sge.lkey = request.local->lkey;

  wr = ibv_send_wr{};
  wr.wr_id = work_id::encode(false, qp_index_, position);
  wr.sg_list = &sge;
  wr.num_sge = request.length > 0 ? 1 : 0;  // as for receives: no zero-length SGE
  wr.opcode = *opcode;
  if (request.signaled) wr.send_flags |= IBV_SEND_SIGNALED;
  // Inline copies the payload through the CPU at post time, so only host memory qualifies, and
  // never a READ (its buffer is a destination).
  if (options_.max_inline > 0 && request.length <= options_.max_inline &&
      request.local->data != nullptr && request.opcode != Opcode::read) {
    wr.send_flags |= IBV_SEND_INLINE;
  }
  if (request.opcode == Opcode::send_with_imm || request.opcode == Opcode::write_with_imm) {
    wr.imm_data = htonl(request.imm);
  }
  if (ud) {
    wr.wr.ud.ah = ud_ah_;
    wr.wr.ud.remote_qpn = ud_remote_qpn_;
    wr.wr.ud.remote_qkey = ud_qkey;
  } else if (request.opcode != Opcode::send && request.opcode != Opcode::send_with_imm) {
    wr.wr.rdma.remote_addr = request.remote_address;
    wr.wr.rdma.rkey = request.rkey;
  }

  SendSlot& slot = send_slots_[position & (send_slots_.size() - 1)];
  slot.wr_id = request.wr_id;
  slot.length = request.length;
  slot.opcode = request.opcode;
  return true;
}

PostResult VerbsQueuePair::post_send(std::span<const SendRequest> requests) {
  if (requests.empty()) return PostResult::ok;
  if (!ready_to_send_) return PostResult::not_connected;
  const std::uint64_t outstanding = send_posted_ - send_retired_;
  if (requests.size() > options_.max_send_wr - outstanding) return PostResult::queue_full;

  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!fill_send(requests[i], send_posted_ + i, send_wrs_[i], send_sges_[i])) {
      return PostResult::invalid;
    }
    send_wrs_[i].next = i + 1 < requests.size() ? &send_wrs_[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  const int error = ibv_post_send(qp_.get(), send_wrs_.data(), &bad);
  if (error == 0) {
    send_posted_ += requests.size();
    return PostResult::ok;
  }
  // The WRs before `bad` were posted and will complete: keep their slots. The interface cannot
  // say how many went, but the free-space check above makes this a NIC-side refusal (a bad
  // opcode for the QP, too much inline data), not a full queue, in practice.
  const auto posted = bad != nullptr ? static_cast<std::uint64_t>(bad - send_wrs_.data()) : 0;
  send_posted_ += posted;
  return error == ENOMEM ? PostResult::queue_full : PostResult::invalid;
}

bool VerbsQueuePair::fill_recv(const RecvRequest& request, std::uint64_t position, ibv_recv_wr& wr,
                               ibv_sge* sges) noexcept {
  if (request.local == nullptr || !inside(*request.local, request.local_offset, request.length)) {
    return false;
  }
  ibv_sge* next = sges;
  if (options_.type == QpType::ud) {
    *next++ = ibv_sge{reinterpret_cast<std::uintptr_t>(grh_scratch_.data()), grh_bytes,
                      grh_scratch_mr_->lkey};
  }
  // A zero-length SGE is left out: some NICs read a byte count of 0 as 2 GiB.
  if (request.length > 0) {
    *next++ = ibv_sge{request.local->remote_address + request.local_offset, request.length,
                      request.local->lkey};
  }
  wr = ibv_recv_wr{};
  wr.wr_id = work_id::encode(true, qp_index_, position);
  wr.sg_list = sges;
  wr.num_sge = static_cast<int>(next - sges);
  recv_slots_[position & (recv_slots_.size() - 1)].wr_id = request.wr_id;
  return true;
}

PostResult VerbsQueuePair::post_recv(std::span<const RecvRequest> requests) {
  if (requests.empty()) return PostResult::ok;
  const std::uint64_t outstanding = recv_posted_ - recv_retired_;
  if (requests.size() > options_.max_recv_wr - outstanding) return PostResult::queue_full;

  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (!fill_recv(requests[i], recv_posted_ + i, recv_wrs_[i], &recv_sges_[i * sges_per_recv_])) {
      return PostResult::invalid;
    }
    recv_wrs_[i].next = i + 1 < requests.size() ? &recv_wrs_[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  const int error = ibv_post_recv(qp_.get(), recv_wrs_.data(), &bad);
  if (error == 0) {
    recv_posted_ += requests.size();
    return PostResult::ok;
  }
  const auto posted = bad != nullptr ? static_cast<std::uint64_t>(bad - recv_wrs_.data()) : 0;
  recv_posted_ += posted;
  return error == ENOMEM ? PostResult::queue_full : PostResult::invalid;
}

bool VerbsQueuePair::complete(const ibv_wc& wc, Completion& out) noexcept {
  return work_id::is_receive(wc.wr_id) ? complete_recv(wc, out) : complete_send(wc, out);
}

void VerbsQueuePair::count_completed_send(const SendSlot& slot) noexcept {
  if (slot.opcode == Opcode::read) {
    counters_.bytes_received += slot.length;
  } else {
    counters_.bytes_sent += slot.length;
  }
}

bool VerbsQueuePair::complete_send(const ibv_wc& wc, Completion& out) noexcept {
  const std::uint64_t position = work_id::position(wc.wr_id, send_retired_);
  if (position >= send_posted_) return false;
  const std::uint64_t mask = send_slots_.size() - 1;
  // The send queue completes in order: this completion retires every WR before it, including
  // the unsignaled ones that report nothing when they succeed. They count as sent unless the
  // QP has failed (then they may have been flushed without an entry of their own).
  for (std::uint64_t p = send_retired_; p < position; ++p) {
    if (!send_error_seen_) count_completed_send(send_slots_[p & mask]);
  }
  const SendSlot& slot = send_slots_[position & mask];
  const WcStatus status = to_wc_status(wc.status);
  if (status == WcStatus::success) {
    count_completed_send(slot);
  } else {
    send_error_seen_ = true;
  }
  send_retired_ = position + 1;

  out = Completion{};
  out.wr_id = slot.wr_id;
  out.status = status;
  out.opcode = slot.opcode;  // the CQE's opcode is undefined on error and merges the imm forms
  out.qpn = wc.qp_num;
  if (status != WcStatus::success) note_device_status(wc, out);
  return true;
}

bool VerbsQueuePair::complete_recv(const ibv_wc& wc, Completion& out) noexcept {
  const std::uint64_t position = work_id::position(wc.wr_id, recv_retired_);
  if (position >= recv_posted_) return false;
  const RecvSlot& slot = recv_slots_[position & (recv_slots_.size() - 1)];
  recv_retired_ = position + 1;

  out = Completion{};
  out.wr_id = slot.wr_id;
  out.status = to_wc_status(wc.status);
  out.opcode = Opcode::recv;
  out.qpn = wc.qp_num;
  if (out.status != WcStatus::success) {
    note_device_status(wc, out);
    return true;  // byte_len and flags are undefined
  }
  std::uint32_t placed = wc.byte_len;
  if (options_.type == QpType::ud) placed = placed >= grh_bytes ? placed - grh_bytes : 0;
  out.byte_len = placed;
  counters_.bytes_received += placed;
  if ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) {
    out.has_imm = true;
    out.imm = ntohl(wc.imm_data);
  }
  return true;
}

}  // namespace rocehil::traffic::verbs
