#include "verbs/qp_attributes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "verbs/gid.hpp"
#include "verbs/mapping.hpp"

namespace rocehil::traffic::verbs {

namespace {

std::uint8_t reads(int device_limit) noexcept {
  return static_cast<std::uint8_t>(std::clamp(device_limit, 0, max_reads_in_flight));
}

}  // namespace

DeviceLimits device_limits(std::string_view device, std::uint8_t port, int gid_index,
                           const ibv_device_attr& device_attr, const ibv_port_attr& port_attr) {
  return DeviceLimits{.device = std::string(device),
                      .port = port,
                      .active_mtu = port_attr.active_mtu,
                      .gid_index = gid_index,
                      .max_qp_wr = device_attr.max_qp_wr,
                      .max_sge = device_attr.max_sge,
                      .max_cqe = device_attr.max_cqe,
                      .max_qp_rd_atom = device_attr.max_qp_rd_atom,
                      .max_qp_init_rd_atom = device_attr.max_qp_init_rd_atom,
                      .retries_forever_at_7 = device_attr.vendor_id == rxe_vendor_id};
}

std::uint32_t receive_sges(QpType type) noexcept {
  return type == QpType::ud ? 2 : 1;
}

ibv_qp_init_attr qp_init_attributes(const QpOptions& options, const DeviceLimits& limits,
                                    ibv_cq* cq) {
  if (!to_ibv_mtu(options.mtu)) {
    throw input_error(
        fmt::format("QP mtu {} is not a RoCE path MTU (256, 512, 1024, 2048, 4096)", options.mtu));
  }
  const std::uint32_t port_mtu = mtu_bytes(limits.active_mtu);
  if (options.mtu > port_mtu) {
    // Not lowered quietly, as perftest does: a suite that asked for 4096-byte packets must not
    // pass on 1024-byte ones.
    throw input_error(
        fmt::format("QP mtu {} exceeds the active MTU {} of {} port {} (raise the netdev MTU: "
                    "9000 gives 4096; or lower the test's mtu)",
                    options.mtu, port_mtu, limits.device, limits.port));
  }
  const auto max_wr = static_cast<std::uint32_t>(std::max(limits.max_qp_wr, 0));
  if (options.max_send_wr == 0 || options.max_send_wr > max_wr || options.max_recv_wr == 0 ||
      options.max_recv_wr > max_wr) {
    throw input_error(fmt::format("QP depths tx {} rx {} on {} are outside 1..{} (max_qp_wr)",
                                  options.max_send_wr, options.max_recv_wr, limits.device, max_wr));
  }
  const std::uint32_t sges = receive_sges(options.type);
  if (static_cast<int>(sges) > limits.max_sge) {
    throw input_error(
        fmt::format("{} QPs need {} scatter/gather entries per receive but {} takes "
                    "{} (max_sge)",
                    options.type == QpType::ud ? "UD" : "RC", sges, limits.device, limits.max_sge));
  }
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = options.type == QpType::ud ? IBV_QPT_UD : IBV_QPT_RC;
  init.sq_sig_all = 0;  // each WR says whether it is signaled
  init.cap.max_send_wr = options.max_send_wr;
  init.cap.max_recv_wr = options.max_recv_wr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = sges;
  // ibv_query_device reports no inline limit: ibv_create_qp refuses what the NIC cannot take.
  init.cap.max_inline_data = options.max_inline;
  return init;
}

std::uint8_t responder_resources(const DeviceLimits& limits) noexcept {
  return reads(limits.max_qp_rd_atom);
}

Transition to_init(QpType type, const DeviceLimits& limits) {
  Transition t{.name = "RESET->INIT"};
  t.attr.qp_state = IBV_QPS_INIT;
  t.attr.pkey_index = 0;  // RoCE has the one default P_Key
  t.attr.port_num = limits.port;
  t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (type == QpType::ud) {
    t.attr.qkey = ud_qkey;
    t.mask |= IBV_QP_QKEY;
  } else {
    t.attr.qp_access_flags = rc_access_flags;
    t.mask |= IBV_QP_ACCESS_FLAGS;
  }
  return t;
}

Transition ud_to_rtr() {
  Transition t{.name = "INIT->RTR"};
  t.attr.qp_state = IBV_QPS_RTR;
  t.mask = IBV_QP_STATE;
  return t;
}

Transition ud_to_rts(std::uint32_t sq_psn) {
  Transition t{.name = "RTR->RTS"};
  t.attr.qp_state = IBV_QPS_RTS;
  t.attr.sq_psn = sq_psn & 0xffffff;
  t.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  return t;
}

ibv_ah_attr address_vector(const DeviceLimits& limits, const ibv_gid& remote_gid,
                           std::uint8_t traffic_class, std::uint8_t sl) {
  ibv_ah_attr av{};
  av.sl = sl;        // RoCE: the PCP of a VLAN-tagged port (mlx5 takes it from here)
  av.is_global = 1;  // RoCE always routes on the GRH; the LID is unused
  av.grh.dgid = remote_gid;
  av.grh.sgid_index = static_cast<std::uint8_t>(limits.gid_index);
  av.grh.hop_limit = hop_limit;
  av.grh.traffic_class = traffic_class;  // the IP TOS byte: DSCP << 2 | ECN
  av.port_num = limits.port;
  return av;
}

Transition rc_to_rtr(const QpOptions& options, const DeviceLimits& limits, const Endpoint& remote,
                     const ibv_gid& remote_gid) {
  const std::uint32_t mtu = std::min(options.mtu, remote.mtu);
  const std::optional<ibv_mtu> path_mtu = to_ibv_mtu(mtu);
  if (!path_mtu) {
    throw input_error(fmt::format("remote QP {:#x} asks for path MTU {}, not a RoCE MTU",
                                  remote.qpn, remote.mtu));
  }
  const std::uint32_t port_mtu = mtu_bytes(limits.active_mtu);
  if (mtu > port_mtu) {
    throw input_error(
        fmt::format("path MTU {} toward QP {:#x} exceeds the active MTU {} of {} port {} (raise "
                    "the netdev MTU or lower the test's mtu)",
                    mtu, remote.qpn, port_mtu, limits.device, limits.port));
  }
  Transition t{.name = "INIT->RTR"};
  t.attr.qp_state = IBV_QPS_RTR;
  t.attr.path_mtu = *path_mtu;
  t.attr.dest_qp_num = remote.qpn & 0xffffff;
  t.attr.rq_psn = remote.psn & 0xffffff;
  t.attr.max_dest_rd_atomic = responder_resources(limits);
  t.attr.min_rnr_timer = min_rnr_timer;
  t.attr.ah_attr = address_vector(limits, remote_gid, options.traffic_class, options.sl);
  t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return t;
}

Transition rc_to_rts(const QpOptions& options, const DeviceLimits& limits, const Endpoint& remote,
                     std::uint32_t sq_psn) {
  Transition t{.name = "RTR->RTS"};
  t.attr.qp_state = IBV_QPS_RTS;
  t.attr.timeout = ack_timeout_exponent(options.ack_timeout_us);
  // 7 on rxe never gives up: 6 there, so a vanished peer ends in retry_exceeded as on a ConnectX.
  t.attr.retry_cnt =
      std::min<std::uint8_t>(options.retry_count, limits.retries_forever_at_7 ? 6 : 7);
  // 7 would retry a missing receive forever; capped so it surfaces as an error instead.
  t.attr.rnr_retry = std::min<std::uint8_t>(options.retry_count, 6);
  t.attr.sq_psn = sq_psn & 0xffffff;
  // More READs in flight than the responder has resources for are NAKed as invalid requests, so
  // a peer with fewer (another NIC model) lowers ours; 0 means it did not say (a soft peer).
  std::uint8_t in_flight = reads(limits.max_qp_init_rd_atom);
  if (remote.max_reads > 0) in_flight = std::min(in_flight, remote.max_reads);
  t.attr.max_rd_atomic = in_flight;
  t.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
           IBV_QP_MAX_QP_RD_ATOMIC;
  return t;
}

void check_cq_room(const DeviceLimits& limits, int cqe, std::uint64_t committed,
                   std::uint32_t send_depth, std::uint32_t recv_depth) {
  const std::uint64_t needed = committed + send_depth + recv_depth;
  if (needed <= static_cast<std::uint64_t>(std::max(cqe, 0))) return;
  throw input_error(
      fmt::format("completion queue on {} holds {} completions; its QPs could have {} "
                  "outstanding with this one (tx {} + rx {}): create the CQ with depth >= {}",
                  limits.device, cqe, needed, send_depth, recv_depth, needed));
}

std::string gid_change(const DeviceLimits& limits, const ibv_gid& chosen,
                       const std::optional<ibv_gid>& now) {
  if (now && std::memcmp(now->raw, chosen.raw, sizeof chosen.raw) == 0) return {};
  const std::string was = gid_address_text(chosen);
  const std::string what =
      now ? fmt::format("now holds {}", gid_address_text(*now)) : std::string("is now empty");
  return fmt::format(
      "the GID table of {} port {} changed while rocehil ran: gid_index {} was {} and {} (an "
      "address was removed or changed on the netdev); restore the address or run again so the "
      "GID is chosen anew",
      limits.device, limits.port, limits.gid_index, was, what);
}

}  // namespace rocehil::traffic::verbs
