#include "verbs/mapping.hpp"

namespace rocehil::traffic::verbs {

WcStatus to_wc_status(ibv_wc_status status) noexcept {
  switch (status) {
    case IBV_WC_SUCCESS: return WcStatus::success;
    case IBV_WC_LOC_LEN_ERR: return WcStatus::local_length_error;
    // Local faults in a work request or its buffers: the closest cause is "a local buffer outside
    // its memory region" (bad lkey, bad access rights, malformed WR, too much inline data).
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_EEC_OP_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_LOC_RDD_VIOL_ERR:
    case IBV_WC_MW_BIND_ERR:
    case IBV_WC_INV_EECN_ERR:
    case IBV_WC_INV_EEC_STATE_ERR:
    case IBV_WC_TM_ERR:
    case IBV_WC_TM_RNDV_INCOMPLETE: return WcStatus::local_protection_error;
    case IBV_WC_REM_ACCESS_ERR: return WcStatus::remote_access_error;
    // The responder refused the request: invalid request NAK, invalid READ request, remote
    // operational error NAK, or an unexpected response opcode.
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_BAD_RESP_ERR: return WcStatus::remote_invalid_request;
    // A SEND that found no receive posted, RNR-NAKed until rnr_retry ran out. Not a retry of a
    // lost packet: the NAKs came back, so the fabric carried them (it used to be counted with
    // the refusals above, which hid the responder's empty receive queue).
    case IBV_WC_RNR_RETRY_EXC_ERR: return WcStatus::rnr_retry_exceeded;
    // No (timely) response from the responder after the transport retries.
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RESP_TIMEOUT_ERR: return WcStatus::retry_exceeded;
    // The QP (or the device) went to the error state: the request did not run.
    case IBV_WC_WR_FLUSH_ERR:
    case IBV_WC_FATAL_ERR:
    case IBV_WC_GENERAL_ERR: return WcStatus::flushed;
  }
  // A status added to libibverbs after this table was written: the request did not complete.
  return WcStatus::flushed;
}

void note_device_status(const ibv_wc& wc, Completion& out) noexcept {
  out.device_status = ibv_wc_status_str(wc.status);
  out.vendor_error = wc.vendor_err;
}

std::optional<ibv_wr_opcode> to_wr_opcode(Opcode op) noexcept {
  switch (op) {
    case Opcode::send: return IBV_WR_SEND;
    case Opcode::send_with_imm: return IBV_WR_SEND_WITH_IMM;
    case Opcode::write: return IBV_WR_RDMA_WRITE;
    case Opcode::write_with_imm: return IBV_WR_RDMA_WRITE_WITH_IMM;
    case Opcode::read: return IBV_WR_RDMA_READ;
    case Opcode::recv: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ibv_mtu> to_ibv_mtu(std::uint32_t bytes) noexcept {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return std::nullopt;
  }
}

std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept {
  switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}

std::uint8_t ack_timeout_exponent(std::uint32_t microseconds) noexcept {
  // Integer nanoseconds: 4.096 us * 2^t = 4096 ns << t, so the comparison is exact.
  const std::uint64_t wanted_ns = std::uint64_t{microseconds} * 1000;
  for (std::uint8_t t = 1; t < 31; ++t) {
    if ((std::uint64_t{4096} << t) >= wanted_ns) return t;
  }
  return 31;
}

double ack_timeout_microseconds(std::uint8_t exponent) noexcept {
  const unsigned t = exponent < 31 ? exponent : 31;  // the field is 5 bits wide
  return 4.096 * static_cast<double>(std::uint64_t{1} << t);
}

}  // namespace rocehil::traffic::verbs
