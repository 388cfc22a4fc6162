// Queue pair setup: creation, state transitions, connect. The data path is in
// queue_pair_post.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "verbs/gid.hpp"
#include "verbs/mapping.hpp"
#include "verbs/queue_pair.hpp"
#include "verbs/udp_sport.hpp"
#include "verbs/work_id.hpp"

namespace rocehil::traffic::verbs {

namespace {

constexpr int access_flags =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
// 0.64 ms between RNR retries (IBTA table, code 12): long enough for a receiver to repost.
constexpr std::uint8_t min_rnr_timer = 12;
// RDMA READs in flight per QP: what ConnectX offers, capped by what the device reports.
constexpr int max_reads_in_flight = 16;
constexpr std::uint8_t hop_limit = 64;

std::uint8_t reads_in_flight(int device_limit) {
  return static_cast<std::uint8_t>(std::clamp(device_limit, 0, max_reads_in_flight));
}

}  // namespace

VerbsQueuePair::VerbsQueuePair(std::shared_ptr<CqCore> cq, const QpOptions& options,
                               std::uint32_t psn)
    : device_(cq->device), cq_(std::move(cq)), options_(options), psn_(psn & 0xffffff) {
  const DeviceContext& device = *device_;
  const bool ud = options.type == QpType::ud;
  const std::string where = fmt::format("{} port {}", device.name, device.port);
  if (!to_ibv_mtu(options.mtu)) {
    throw input_error(
        fmt::format("QP mtu {} is not a RoCE path MTU (256, 512, 1024, 2048, 4096)", options.mtu));
  }
  const auto max_wr = static_cast<std::uint32_t>(device.device_attr.max_qp_wr);
  if (options.max_send_wr == 0 || options.max_send_wr > max_wr || options.max_recv_wr == 0 ||
      options.max_recv_wr > max_wr) {
    throw input_error(fmt::format("QP depths tx {} rx {} on {} are outside 1..{}",
                                  options.max_send_wr, options.max_recv_wr, device.name, max_wr));
  }
  const std::uint64_t needed = cq_->committed + options.max_send_wr + options.max_recv_wr;
  if (needed > static_cast<std::uint64_t>(cq_->cq->cqe)) {
    throw input_error(fmt::format(
        "completion queue on {} holds {} completions; its QPs could have "
        "{} outstanding with this one (tx {} + rx {}): create the CQ "
        "with depth >= {}",
        device.name, cq_->cq->cqe, needed, options.max_send_wr, options.max_recv_wr, needed));
  }
  if (options.udp_sport != 0) {
    const std::string reason =
        ud ? std::string("UD QPs take no per-QP source port (mlx5 sets it on RC/UC only)")
           : UdpSourcePort::instance().unsupported_reason(device.context->device);
    if (!reason.empty()) {
      throw Error(ExitCode::bad_input,
                  fmt::format("UDP source port {} requested for a QP on {}, but {}; set "
                              "udp_sport to 0 to let the NIC choose",
                              options.udp_sport, where, reason),
                  EOPNOTSUPP);
    }
    udp_sport_ = options.udp_sport;
  }
  if (ud) {
    ud_max_message_ = std::min(options.mtu, mtu_bytes(device.port_attr.active_mtu));
    grh_scratch_ = HostBuffer::allocate(grh_bytes);
    grh_scratch_mr_ = register_mr(device.pd.get(), grh_scratch_.data(), grh_scratch_.length(),
                                  IBV_ACCESS_LOCAL_WRITE, device.name);
    sges_per_recv_ = 2;
  }

  ibv_qp_init_attr init{};
  init.send_cq = cq_->cq.get();
  init.recv_cq = cq_->cq.get();
  init.qp_type = ud ? IBV_QPT_UD : IBV_QPT_RC;
  init.sq_sig_all = 0;  // each WR says whether it is signaled
  init.cap.max_send_wr = options.max_send_wr;
  init.cap.max_recv_wr = options.max_recv_wr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = sges_per_recv_;
  init.cap.max_inline_data = options.max_inline;
  qp_ = create_qp(device.pd.get(), init, device.name);

  // The caller's depths bound what is outstanding (the NIC may have rounded its queues up); the
  // slot rings are the next power of two so a position maps to a slot with a mask.
  send_wrs_.resize(options.max_send_wr);
  send_sges_.resize(options.max_send_wr);
  send_slots_.resize(std::bit_ceil(options.max_send_wr));
  recv_wrs_.resize(options.max_recv_wr);
  recv_sges_.resize(std::size_t{options.max_recv_wr} * sges_per_recv_);
  recv_slots_.resize(std::bit_ceil(options.max_recv_wr));

  move_to_init();
  if (ud) move_ud_to_rts();

  // Last, once nothing can throw: a half-built QP must not stay in the CQ's table.
  if (cq_->queue_pairs.size() > work_id::max_qp_index) {
    throw Error(ExitCode::infrastructure,
                fmt::format("completion queue on {} has served {} QPs, the most it can track",
                            device.name, cq_->queue_pairs.size()));
  }
  qp_index_ = static_cast<std::uint32_t>(cq_->queue_pairs.size());
  cq_->queue_pairs.push_back(this);
}

VerbsQueuePair::~VerbsQueuePair() {
  cq_->queue_pairs[qp_index_] = nullptr;
}

Endpoint VerbsQueuePair::local_endpoint() const {
  Endpoint endpoint;
  endpoint.address = device_->address;
  endpoint.gid = format_gid(device_->gid);
  endpoint.qpn = qpn();
  endpoint.psn = psn_;
  endpoint.udp_sport = udp_sport_;
  endpoint.mtu = options_.mtu;
  return endpoint;
}

void VerbsQueuePair::modify(ibv_qp_attr& attributes, int mask, const char* transition) {
  const int error = ibv_modify_qp(qp_.get(), &attributes, mask);
  if (error != 0) {
    throw system_error(fmt::format("ibv_modify_qp({}) of QP {:#x} on {} port {}", transition, qpn(),
                                   device_->name, device_->port),
                       error);
  }
}

void VerbsQueuePair::move_to_init() {
  ibv_qp_attr attributes{};
  attributes.qp_state = IBV_QPS_INIT;
  attributes.pkey_index = 0;
  attributes.port_num = device_->port;
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
  if (options_.type == QpType::ud) {
    attributes.qkey = ud_qkey;
    mask |= IBV_QP_QKEY;
  } else {
    attributes.qp_access_flags = access_flags;
    mask |= IBV_QP_ACCESS_FLAGS;
  }
  modify(attributes, mask, "RESET->INIT");
}

void VerbsQueuePair::move_ud_to_rts() {
  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  modify(rtr, IBV_QP_STATE, "INIT->RTR");
  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.sq_psn = psn_;
  modify(rts, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTR->RTS");
}

ibv_ah_attr VerbsQueuePair::address_vector(const ibv_gid& remote_gid) const {
  ibv_ah_attr av{};
  av.is_global = 1;  // RoCE always routes on the GRH; the LID is unused
  av.grh.dgid = remote_gid;
  av.grh.sgid_index = static_cast<std::uint8_t>(device_->gid_index);
  av.grh.hop_limit = hop_limit;
  av.grh.traffic_class = options_.traffic_class;
  av.port_num = device_->port;
  return av;
}

void VerbsQueuePair::connect(const Endpoint& remote) {
  // Peers from the verbs provider always send the GID; an endpoint without one (a `soft` peer,
  // a hand-written one) is reached through the GID its IP address maps to.
  const std::optional<ibv_gid> gid =
      remote.gid.empty() ? gid_from_address(remote.address) : parse_gid(remote.gid);
  if (!gid) {
    throw input_error(
        fmt::format("remote endpoint of QP {:#x} on {} has GID '{}' and address "
                    "'{}': need 32 hex digits or an IP address",
                    qpn(), device_->name, remote.gid, remote.address));
  }
  if (options_.type == QpType::ud) {
    connect_ud(remote, *gid);
  } else {
    connect_rc(remote, *gid);
  }
}

void VerbsQueuePair::connect_rc(const Endpoint& remote, const ibv_gid& gid) {
  if (ready_to_send_) {
    throw input_error(fmt::format("RC QP {:#x} on {} is already connected", qpn(), device_->name));
  }
  const std::uint32_t mtu = std::min(options_.mtu, remote.mtu);
  const std::optional<ibv_mtu> path_mtu = to_ibv_mtu(mtu);
  if (!path_mtu) {
    throw input_error(fmt::format("remote QP {:#x} asks for path MTU {}, not a RoCE MTU",
                                  remote.qpn, remote.mtu));
  }
  const std::uint32_t port_mtu = mtu_bytes(device_->port_attr.active_mtu);
  if (mtu > port_mtu) {
    throw input_error(
        fmt::format("path MTU {} for QP {:#x} exceeds the active MTU {} of {} port "
                    "{} (raise the netdev MTU or lower the QP mtu)",
                    mtu, qpn(), port_mtu, device_->name, device_->port));
  }

  ibv_qp_attr rtr{};
  rtr.qp_state = IBV_QPS_RTR;
  rtr.path_mtu = *path_mtu;
  rtr.dest_qp_num = remote.qpn & 0xffffff;
  rtr.rq_psn = remote.psn & 0xffffff;
  rtr.max_dest_rd_atomic = reads_in_flight(device_->device_attr.max_qp_rd_atom);
  rtr.min_rnr_timer = min_rnr_timer;
  rtr.ah_attr = address_vector(gid);
  modify(rtr,
         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
         "INIT->RTR");

  ibv_qp_attr rts{};
  rts.qp_state = IBV_QPS_RTS;
  rts.timeout = ack_timeout_exponent(options_.ack_timeout_us);
  rts.retry_cnt = std::min<std::uint8_t>(options_.retry_count, 7);
  // 7 would retry a missing receive forever; capped so it surfaces as an error instead.
  rts.rnr_retry = std::min<std::uint8_t>(options_.retry_count, 6);
  rts.sq_psn = psn_;
  rts.max_rd_atomic = reads_in_flight(device_->device_attr.max_qp_init_rd_atom);
  modify(rts,
         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC,
         "RTR->RTS");
  ready_to_send_ = true;

  // mlx5dv_modify_qp_udp_sport only applies in RTS.
  if (udp_sport_ != 0) {
    const int error = UdpSourcePort::instance().set(qp_.get(), udp_sport_);
    if (error != 0) {
      throw system_error(fmt::format("mlx5dv_modify_qp_udp_sport({}) of QP {:#x} on {} (the "
                                     "firmware may lack the capability)",
                                     udp_sport_, qpn(), device_->name),
                         error);
    }
  }
}

void VerbsQueuePair::connect_ud(const Endpoint& remote, const ibv_gid& gid) {
  auto known = std::find_if(ud_remotes_.begin(), ud_remotes_.end(), [&](const UdRemote& r) {
    return std::memcmp(r.gid.raw, gid.raw, sizeof gid.raw) == 0;
  });
  if (known == ud_remotes_.end()) {
    ibv_ah_attr av = address_vector(gid);
    ud_remotes_.push_back(UdRemote{gid, create_ah(device_->pd.get(), av, device_->name, qpn())});
    known = ud_remotes_.end() - 1;
  }
  ud_ah_ = known->ah.get();
  ud_remote_qpn_ = remote.qpn & 0xffffff;
  ready_to_send_ = true;
}

}  // namespace rocehil::traffic::verbs
