#include "verbs/mapping.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "verbs/work_id.hpp"

namespace rocehil::traffic::verbs {
namespace {

TEST(VerbsMapping, EveryWorkCompletionStatusHasItsCause) {
  const std::pair<ibv_wc_status, WcStatus> table[] = {
      {IBV_WC_SUCCESS, WcStatus::success},
      {IBV_WC_LOC_LEN_ERR, WcStatus::local_length_error},
      {IBV_WC_LOC_QP_OP_ERR, WcStatus::local_protection_error},
      {IBV_WC_LOC_EEC_OP_ERR, WcStatus::local_protection_error},
      {IBV_WC_LOC_PROT_ERR, WcStatus::local_protection_error},
      {IBV_WC_WR_FLUSH_ERR, WcStatus::flushed},
      {IBV_WC_MW_BIND_ERR, WcStatus::local_protection_error},
      {IBV_WC_BAD_RESP_ERR, WcStatus::remote_invalid_request},
      {IBV_WC_LOC_ACCESS_ERR, WcStatus::local_protection_error},
      {IBV_WC_REM_INV_REQ_ERR, WcStatus::remote_invalid_request},
      {IBV_WC_REM_ACCESS_ERR, WcStatus::remote_access_error},
      {IBV_WC_REM_OP_ERR, WcStatus::remote_invalid_request},
      {IBV_WC_RETRY_EXC_ERR, WcStatus::retry_exceeded},
      {IBV_WC_RNR_RETRY_EXC_ERR, WcStatus::rnr_retry_exceeded},
      {IBV_WC_LOC_RDD_VIOL_ERR, WcStatus::local_protection_error},
      {IBV_WC_REM_INV_RD_REQ_ERR, WcStatus::remote_invalid_request},
      {IBV_WC_REM_ABORT_ERR, WcStatus::remote_invalid_request},
      {IBV_WC_INV_EECN_ERR, WcStatus::local_protection_error},
      {IBV_WC_INV_EEC_STATE_ERR, WcStatus::local_protection_error},
      {IBV_WC_FATAL_ERR, WcStatus::flushed},
      {IBV_WC_RESP_TIMEOUT_ERR, WcStatus::retry_exceeded},
      {IBV_WC_GENERAL_ERR, WcStatus::flushed},
      {IBV_WC_TM_ERR, WcStatus::local_protection_error},
      {IBV_WC_TM_RNDV_INCOMPLETE, WcStatus::local_protection_error},
  };
  for (const auto& [verbs_status, expected] : table) {
    EXPECT_EQ(to_wc_status(verbs_status), expected) << ibv_wc_status_str(verbs_status);
  }
  // A status from a newer libibverbs: the request did not complete.
  EXPECT_EQ(to_wc_status(static_cast<ibv_wc_status>(31)), WcStatus::flushed);
}

// The words are libibverbs' own (enum_strs.c), so an engineer can search for them; rocehil's
// status leads, the NIC's follows, and a syndrome of 0 (rxe never sets one) is left out.
TEST(VerbsMapping, AFailedCompletionIsDescribedInTheNicsOwnWords) {
  ibv_wc wc{};
  wc.status = IBV_WC_RETRY_EXC_ERR;
  wc.vendor_err = 0x81;
  Completion c;
  c.qpn = 0x11;
  c.status = to_wc_status(wc.status);
  note_device_status(wc, c);
  EXPECT_EQ(describe_failure(c),
            "QP 0x11: retry_exceeded (the NIC: transport retry counter exceeded, vendor error "
            "0x81)");
  wc.status = IBV_WC_REM_ACCESS_ERR;
  wc.vendor_err = 0;
  c.status = to_wc_status(wc.status);
  note_device_status(wc, c);
  EXPECT_EQ(describe_failure(c), "QP 0x11: remote_access_error (the NIC: remote access error)");
  c.device_status = nullptr;  // soft: its status is its own
  EXPECT_EQ(describe_failure(c), "QP 0x11: remote_access_error");
}

TEST(VerbsMapping, OpcodesMapToWorkRequestOpcodes) {
  EXPECT_EQ(to_wr_opcode(Opcode::send), IBV_WR_SEND);
  EXPECT_EQ(to_wr_opcode(Opcode::send_with_imm), IBV_WR_SEND_WITH_IMM);
  EXPECT_EQ(to_wr_opcode(Opcode::write), IBV_WR_RDMA_WRITE);
  EXPECT_EQ(to_wr_opcode(Opcode::write_with_imm), IBV_WR_RDMA_WRITE_WITH_IMM);
  EXPECT_EQ(to_wr_opcode(Opcode::read), IBV_WR_RDMA_READ);
  EXPECT_EQ(to_wr_opcode(Opcode::recv), std::nullopt);
}

TEST(VerbsMapping, MtuBytesRoundTrip) {
  const std::pair<std::uint32_t, ibv_mtu> table[] = {
      {256, IBV_MTU_256},   {512, IBV_MTU_512},   {1024, IBV_MTU_1024},
      {2048, IBV_MTU_2048}, {4096, IBV_MTU_4096},
  };
  for (const auto& [bytes, mtu] : table) {
    EXPECT_EQ(to_ibv_mtu(bytes), mtu);
    EXPECT_EQ(mtu_bytes(mtu), bytes);
  }
  for (const std::uint32_t bad : {0u, 128u, 1500u, 4200u, 8192u, 9000u}) {
    EXPECT_EQ(to_ibv_mtu(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(mtu_bytes(static_cast<ibv_mtu>(0)), 0u);
}

TEST(VerbsMapping, AckTimeoutIsTheSmallestExponentCoveringTheRequest) {
  EXPECT_EQ(ack_timeout_exponent(4096), 10);  // 4.096 us * 2^10 = 4194.304 us
  EXPECT_DOUBLE_EQ(ack_timeout_microseconds(10), 4194.304);
  EXPECT_EQ(ack_timeout_exponent(0), 1);  // never 0: that is "wait forever"
  EXPECT_EQ(ack_timeout_exponent(8), 1);  // 8.192 us
  EXPECT_EQ(ack_timeout_exponent(9), 2);
  EXPECT_EQ(ack_timeout_exponent(0xffffffffu), 30);  // 4295 s <= 4.096 us * 2^30 = 4398 s
  for (std::uint8_t t = 1; t < 30; ++t) {
    const double us = ack_timeout_microseconds(t);
    EXPECT_EQ(ack_timeout_exponent(static_cast<std::uint32_t>(std::floor(us))), t) << int{t};
    EXPECT_EQ(ack_timeout_exponent(static_cast<std::uint32_t>(std::ceil(us)) + 1), t + 1) << int{t};
  }
  EXPECT_DOUBLE_EQ(ack_timeout_microseconds(31), ack_timeout_microseconds(40));  // 5-bit field
}

TEST(VerbsWorkId, CarriesQueueQpIndexAndPosition) {
  const std::uint64_t id = work_id::encode(true, 12345, 0x1'0000'0007);
  EXPECT_TRUE(work_id::is_receive(id));
  EXPECT_EQ(work_id::qp_index(id), 12345u);
  EXPECT_EQ(work_id::position(id, 0x1'0000'0000), 0x1'0000'0007u);

  const std::uint64_t send = work_id::encode(false, work_id::max_qp_index, 5);
  EXPECT_FALSE(work_id::is_receive(send));
  EXPECT_EQ(work_id::qp_index(send), work_id::max_qp_index);
}

TEST(VerbsWorkId, PositionSurvivesThe32BitWrap) {
  const std::uint64_t oldest = 0xffff'fffe;  // two WRs before the wrap are outstanding
  for (std::uint64_t position = oldest; position < oldest + 8; ++position) {
    EXPECT_EQ(work_id::position(work_id::encode(false, 1, position), oldest), position);
  }
}

}  // namespace
}  // namespace rocehil::traffic::verbs
