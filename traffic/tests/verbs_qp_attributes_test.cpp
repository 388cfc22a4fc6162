// The QP attribute builders held to ibv_modify_qp(3)'s table of required attributes per
// transition (rdma-core libibverbs/man/ibv_modify_qp.3, "minimum list of attributes that must be
// changed upon transitioning QP state from: Reset --> Init --> RTR --> RTS") and to the limits a
// real device reports.
#include "verbs/qp_attributes.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "rocehil/common/error.hpp"
#include "verbs/gid.hpp"

namespace rocehil::traffic::verbs {
namespace {

// What `ibv_devinfo -v` prints for a ConnectX-6 Dx (vendor_part_id 4125; the same numbers for a
// ConnectX-6, 4123) in public bug reports: max_qp_wr 32768, max_sge 30, max_cqe 4194303,
// max_qp_rd_atom 16, max_qp_init_rd_atom 16; active_mtu 4096 on a 9000-byte netdev.
DeviceLimits connectx6() {
  return DeviceLimits{.device = "mlx5_0",
                      .port = 1,
                      .active_mtu = IBV_MTU_4096,
                      .gid_index = 3,
                      .max_qp_wr = 32768,
                      .max_sge = 30,
                      .max_cqe = 4194303,
                      .max_qp_rd_atom = 16,
                      .max_qp_init_rd_atom = 16};
}

ibv_gid gid_of_address(const char* address) {
  return *gid_from_address(address);
}

Endpoint peer(std::uint32_t mtu = 4096, std::uint8_t max_reads = 16) {
  Endpoint e;
  e.address = "198.18.1.2";
  e.gid = format_gid(gid_of_address("198.18.1.2"));
  e.qpn = 0x1234567;  // more than 24 bits: only the low 24 may reach the QP
  e.psn = 0xabcdef12;
  e.mtu = mtu;
  e.max_reads = max_reads;
  return e;
}

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::bad_input) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(VerbsQpAttributes, RcTransitionsSetExactlyTheManPagesRequiredAttributes) {
  const QpOptions options;
  EXPECT_EQ(to_init(QpType::rc, connectx6()).mask,
            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  EXPECT_EQ(rc_to_rtr(options, connectx6(), peer(), gid_of_address("198.18.1.2")).mask,
            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(), 7).mask,
            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
                IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT);
}

TEST(VerbsQpAttributes, UdTransitionsSetExactlyTheManPagesRequiredAttributes) {
  EXPECT_EQ(to_init(QpType::ud, connectx6()).mask,
            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  EXPECT_EQ(ud_to_rtr().mask, IBV_QP_STATE);
  EXPECT_EQ(ud_to_rts(1).mask, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

TEST(VerbsQpAttributes, InitNamesThePortAndGrantsRemoteAccessWithLocalWrite) {
  const Transition rc = to_init(QpType::rc, connectx6());
  EXPECT_EQ(rc.attr.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(rc.attr.port_num, 1);
  EXPECT_EQ(rc.attr.pkey_index, 0);
  // ibv_reg_mr(3): remote write (and atomic) access requires local write.
  EXPECT_EQ(rc.attr.qp_access_flags,
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  const Transition ud = to_init(QpType::ud, connectx6());
  EXPECT_EQ(ud.attr.qkey, ud_qkey);
  EXPECT_EQ(ud.attr.qkey & 0x80000000u, 0u);  // Q_Keys with the high bit are privileged
}

TEST(VerbsQpAttributes, RtrAddressesTheRemoteOverRoceV2) {
  QpOptions options;
  options.traffic_class = 26 << 2 | 2;  // DSCP 26, ECT(0)
  options.sl = 3;                       // the VLAN priority, for a fabric that trusts PCP
  const ibv_gid remote = gid_of_address("198.18.1.2");
  const Transition t = rc_to_rtr(options, connectx6(), peer(), remote);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(t.attr.dest_qp_num, 0x234567u);
  EXPECT_EQ(t.attr.rq_psn, 0xcdef12u);
  EXPECT_EQ(t.attr.path_mtu, IBV_MTU_1024);  // the default QP mtu, the smaller of the two
  EXPECT_EQ(t.attr.max_dest_rd_atomic, 16);
  EXPECT_EQ(t.attr.min_rnr_timer, 12);
  const ibv_ah_attr& av = t.attr.ah_attr;
  EXPECT_EQ(av.is_global, 1);  // RoCE: no LIDs, every packet carries the GRH's addresses
  EXPECT_EQ(av.grh.sgid_index, 3);
  EXPECT_EQ(av.grh.traffic_class, 26 << 2 | 2);
  EXPECT_EQ(av.sl, 3);
  EXPECT_GT(av.grh.hop_limit, 1);  // routed across leaves and spines
  EXPECT_EQ(av.port_num, 1);
  EXPECT_EQ(0, std::memcmp(av.grh.dgid.raw, remote.raw, 16));
}

// Classes spread over a connection's QPs (suite `traffic_class: {per_qp: [...]}`): each QP's
// RTR carries its own class in the GRH of its address vector (rdma-core verbs.h: struct
// ibv_global_route { ...; uint8_t traffic_class; } in ibv_ah_attr.grh, set with IBV_QP_AV).
TEST(VerbsQpAttributes, EachQpsAddressVectorCarriesItsOwnClass) {
  const std::uint8_t classes[] = {106, 98};
  const ibv_gid remote = gid_of_address("198.18.1.2");
  for (std::uint8_t i = 0; i < 4; ++i) {
    QpOptions options;
    options.traffic_class = classes[i % 2];
    const Transition t = rc_to_rtr(options, connectx6(), peer(), remote);
    EXPECT_NE(t.mask & IBV_QP_AV, 0) << "QP " << int{i};
    EXPECT_EQ(t.attr.ah_attr.grh.traffic_class, classes[i % 2]) << "QP " << int{i};
  }
}

TEST(VerbsQpAttributes, PathMtuIsTheSmallerQpsAndNeverAboveThePortsActiveMtu) {
  QpOptions options;
  options.mtu = 4096;
  EXPECT_EQ(rc_to_rtr(options, connectx6(), peer(2048), gid_of_address("198.18.1.2")).attr.path_mtu,
            IBV_MTU_2048);
  DeviceLimits netdev_1500 = connectx6();
  netdev_1500.active_mtu = IBV_MTU_1024;
  const std::string message = message_of(
      [&] { rc_to_rtr(options, netdev_1500, peer(4096), gid_of_address("198.18.1.2")); });
  EXPECT_NE(message.find("path MTU 4096"), std::string::npos) << message;
  EXPECT_NE(message.find("active MTU 1024 of mlx5_0 port 1"), std::string::npos) << message;
  EXPECT_NE(message_of([&] {
              rc_to_rtr(options, connectx6(), peer(1500), gid_of_address("198.18.1.2"));
            }).find("not a RoCE MTU"),
            std::string::npos);
  // Creation refuses it already, before any endpoint is exchanged.
  EXPECT_NE(message_of([&] {
              qp_init_attributes(options, netdev_1500, nullptr);
            }).find("raise the netdev MTU"),
            std::string::npos);
}

TEST(VerbsQpAttributes, RtsTimersRetriesAndPsn) {
  QpOptions options;  // ack_timeout_us 67108: perftest's timeout 14
  options.retry_count = 7;
  const Transition t = rc_to_rts(options, connectx6(), peer(), 0x1abcdef);
  EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(t.attr.timeout, 14);
  EXPECT_EQ(t.attr.retry_cnt, 7);
  EXPECT_EQ(t.attr.rnr_retry, 6);  // 7 means retry a missing receive forever
  EXPECT_EQ(t.attr.sq_psn, 0xabcdefu);
  options.retry_count = 9;  // the fields are 3 bits wide
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(), 0).attr.retry_cnt, 7);
}

// rxe retries forever at 7 (rxe_comp.c: "if (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--"):
// it gets 6, a ConnectX keeps 7, and fewer asked stay fewer on both. On a guest, a WRITE to a
// destroyed QP got no completion in 5 s with 7, and "transport retry counter exceeded" with 6.
TEST(VerbsQpAttributes, RxeGetsSixRetriesBecauseSevenIsForeverThere) {
  ibv_device_attr attr{};
  ibv_port_attr port{};
  attr.vendor_id = 0x02c9;  // Mellanox
  EXPECT_FALSE(device_limits("mlx5_0", 1, 3, attr, port).retries_forever_at_7);
  attr.vendor_id = 0xffffff;  // what rxe reports
  const DeviceLimits rxe = device_limits("rxe0", 1, 1, attr, port);
  EXPECT_TRUE(rxe.retries_forever_at_7);
  QpOptions options;
  options.retry_count = 7;
  EXPECT_EQ(rc_to_rts(options, rxe, peer(1024), 0).attr.retry_cnt, 6);
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(), 0).attr.retry_cnt, 7);
  options.retry_count = 3;
  EXPECT_EQ(rc_to_rts(options, rxe, peer(1024), 0).attr.retry_cnt, 3);
}

TEST(VerbsQpAttributes, ReadsInFlightStayWithinBothDevicesAndThePeersResponderResources) {
  const QpOptions options;
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(4096, 16), 0).attr.max_rd_atomic, 16);
  // A peer that serves 4 READs at once NAKs the fifth: ours follow its number.
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(4096, 4), 0).attr.max_rd_atomic, 4);
  // A peer that did not say (soft) leaves the device's own limit.
  EXPECT_EQ(rc_to_rts(options, connectx6(), peer(4096, 0), 0).attr.max_rd_atomic, 16);
  // ConnectX-3 reports max_qp_init_rd_atom 128: capped at what the responder side takes.
  DeviceLimits cx3 = connectx6();
  cx3.max_qp_init_rd_atom = 128;
  cx3.max_qp_rd_atom = 16;
  EXPECT_EQ(rc_to_rts(options, cx3, peer(4096, 0), 0).attr.max_rd_atomic, max_reads_in_flight);
  EXPECT_EQ(responder_resources(cx3), 16);
  DeviceLimits none = connectx6();
  none.max_qp_rd_atom = 0;
  EXPECT_EQ(rc_to_rtr(options, none, peer(), gid_of_address("198.18.1.2")).attr.max_dest_rd_atomic,
            0);
}

TEST(VerbsQpAttributes, CreationAttributesStayWithinTheDevicesLimits) {
  QpOptions options;
  options.max_send_wr = 32768;
  options.max_recv_wr = 1;
  options.max_inline = 64;
  const ibv_qp_init_attr rc = qp_init_attributes(options, connectx6(), nullptr);
  EXPECT_EQ(rc.qp_type, IBV_QPT_RC);
  EXPECT_EQ(rc.sq_sig_all, 0);  // unsignaled WRs are the workloads' choice
  EXPECT_EQ(rc.cap.max_send_wr, 32768u);
  EXPECT_EQ(rc.cap.max_recv_wr, 1u);
  EXPECT_EQ(rc.cap.max_send_sge, 1u);
  EXPECT_EQ(rc.cap.max_recv_sge, 1u);
  EXPECT_EQ(rc.cap.max_inline_data, 64u);
  options.type = QpType::ud;
  EXPECT_EQ(qp_init_attributes(options, connectx6(), nullptr).cap.max_recv_sge, 2u);  // + GRH

  options.max_send_wr = 32769;
  EXPECT_NE(message_of([&] {
              qp_init_attributes(options, connectx6(), nullptr);
            }).find("outside 1..32768 (max_qp_wr)"),
            std::string::npos);
  options.max_send_wr = 0;
  EXPECT_NE(message_of([&] { qp_init_attributes(options, connectx6(), nullptr); }).find("tx 0"),
            std::string::npos);
  options.max_send_wr = 16;
  DeviceLimits one_sge = connectx6();
  one_sge.max_sge = 1;
  EXPECT_NE(message_of([&] { qp_init_attributes(options, one_sge, nullptr); }).find("max_sge"),
            std::string::npos);
  options.type = QpType::rc;
  EXPECT_NO_THROW(qp_init_attributes(options, one_sge, nullptr));
}

TEST(VerbsQpAttributes, ACompletionQueueMustHoldEveryOutstandingWorkRequest) {
  // 1024 QPs of tx 4096 + rx 8240 (a bw run at the largest qps and tx_depth a suite allows)
  // need 12.6 M completions; the biggest ConnectX CQ holds 4194303.
  std::uint64_t committed = 0;
  int fitted = 0;
  try {
    for (; fitted < 1024; ++fitted) {
      check_cq_room(connectx6(), 4194303, committed, 4096, 8240);
      committed += 4096 + 8240;
    }
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("holds 4194303 completions"), std::string::npos) << message;
    EXPECT_NE(message.find("depth >= 4206576"), std::string::npos) << message;
  }
  EXPECT_EQ(fitted, 340);  // 340 x 12336 = 4194240 fit; the 341st would overrun
  EXPECT_NO_THROW(check_cq_room(connectx6(), 100, 60, 20, 20));
  EXPECT_THROW(check_cq_room(connectx6(), 100, 61, 20, 20), Error);
}

TEST(VerbsQpAttributes, AGidThatChangedWhileRunningIsNamed) {
  const ibv_gid chosen = gid_of_address("198.18.1.1");
  EXPECT_EQ(gid_change(connectx6(), chosen, chosen), "");
  const std::string moved = gid_change(connectx6(), chosen, gid_of_address("198.18.9.9"));
  EXPECT_NE(moved.find("mlx5_0 port 1"), std::string::npos) << moved;
  EXPECT_NE(moved.find("gid_index 3 was 198.18.1.1 and now holds 198.18.9.9"), std::string::npos)
      << moved;
  const std::string gone = gid_change(connectx6(), chosen, std::nullopt);
  EXPECT_NE(gone.find("is now empty"), std::string::npos) << gone;
}

}  // namespace
}  // namespace rocehil::traffic::verbs
