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

VerbsQueuePair::VerbsQueuePair(std::shared_ptr<CqCore> cq, const QpOptions& options,
                               std::uint32_t psn)
    : device_(cq->device), cq_(std::move(cq)), options_(options), psn_(psn & 0xffffff) {
  const DeviceContext& device = *device_;
  const bool ud = options.type == QpType::ud;
  const std::string where = fmt::format("{} port {}", device.name, device.port);
  ibv_qp_init_attr init = qp_init_attributes(options, device.limits, cq_->cq.get());
  check_cq_room(device.limits, cq_->cq->cqe, cq_->committed, options.max_send_wr,
                options.max_recv_wr);
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
    ud_max_message_ = options.mtu;  // a UD message is one packet; the MTU is checked above
    grh_scratch_ = HostBuffer::allocate(grh_bytes);
    grh_scratch_mr_ = register_mr(device.pd.get(), grh_scratch_.data(), grh_scratch_.length(),
                                  IBV_ACCESS_LOCAL_WRITE, device.name);
  }
  sges_per_recv_ = receive_sges(options.type);
  qp_ = create_qp(device.pd.get(), init, device.name);
  if (init.cap.max_inline_data < options.max_inline) {
    // ibv_create_qp writes back what it granted; posting more inline than that fails per WR.
    throw input_error(
        fmt::format("{} grants {} bytes of inline data per WR, not the {} asked "
                    "for: lower max_inline",
                    where, init.cap.max_inline_data, options.max_inline));
  }

  // The caller's depths bound what is outstanding (the NIC may have rounded its queues up); the
  // slot rings are the next power of two so a position maps to a slot with a mask.
  send_wrs_.resize(options.max_send_wr);
  send_sges_.resize(options.max_send_wr);
  send_slots_.resize(std::bit_ceil(options.max_send_wr));
  recv_wrs_.resize(options.max_recv_wr);
  recv_sges_.resize(std::size_t{options.max_recv_wr} * sges_per_recv_);
  recv_slots_.resize(std::bit_ceil(options.max_recv_wr));

  modify(to_init(options.type, device.limits));
  if (ud) {
    modify(ud_to_rtr());
    modify(ud_to_rts(psn_));
  }

  // Last, once nothing can throw: a half-built QP must not stay in the CQ's table.
  if (cq_->queue_pairs.size() > work_id::max_qp_index) {
    throw Error(ExitCode::infrastructure,
                fmt::format("completion queue on {} has served {} QPs, the most it can track",
                            device.name, cq_->queue_pairs.size()));
  }
  qp_index_ = static_cast<std::uint32_t>(cq_->queue_pairs.size());
  cq_->queue_pairs.push_back(this);
  cq_->committed += std::uint64_t{options.max_send_wr} + options.max_recv_wr;
}

VerbsQueuePair::~VerbsQueuePair() {
  cq_->queue_pairs[qp_index_] = nullptr;
  cq_->committed -= std::uint64_t{options_.max_send_wr} + options_.max_recv_wr;
}

Endpoint VerbsQueuePair::local_endpoint() const {
  Endpoint endpoint;
  endpoint.address = device_->address;
  endpoint.gid = format_gid(device_->gid);
  endpoint.qpn = qpn();
  endpoint.psn = psn_;
  endpoint.udp_sport = udp_sport_;
  endpoint.mtu = options_.mtu;
  endpoint.max_reads = options_.type == QpType::rc ? responder_resources(device_->limits) : 0;
  return endpoint;
}

void VerbsQueuePair::modify(Transition transition, std::string_view toward) {
  const int error = ibv_modify_qp(qp_.get(), &transition.attr, transition.mask);
  if (error != 0) {
    throw system_error(fmt::format("ibv_modify_qp({}) of QP {:#x} on {} port {}{}", transition.name,
                                   qpn(), device_->name, device_->port, toward),
                       error);
  }
}

void VerbsQueuePair::check_source_gid() const {
  const DeviceContext& device = *device_;
  ibv_gid_entry entry{};
  std::optional<ibv_gid> now;
  if (ibv_query_gid_ex(device.context.get(), device.port,
                       static_cast<std::uint32_t>(device.gid_index), &entry, 0) == 0) {
    now = entry.gid;
  }
  const std::string change = gid_change(device.limits, device.gid, now);
  if (!change.empty()) throw Error(ExitCode::infrastructure, change, EADDRNOTAVAIL);
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
  // A GID that vanished since the device was opened would send from an address the netdev no
  // longer has: say so here rather than as a retry_exceeded later.
  check_source_gid();
  // RTR is where the kernel resolves the peer's Ethernet address from its GID (the neighbour
  // table): a GID no host answers for fails here, so the error names it.
  modify(rc_to_rtr(options_, device_->limits, remote, gid),
         fmt::format(" toward QP {:#x} at {} (GID {})", remote.qpn,
                     remote.address.empty() ? "?" : remote.address, format_gid(gid)));
  modify(rc_to_rts(options_, device_->limits, remote, psn_));
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
    check_source_gid();
    ibv_ah_attr av = address_vector(device_->limits, gid, options_.traffic_class, options_.sl);
    ud_remotes_.push_back(UdRemote{gid, create_ah(device_->pd.get(), av, device_->name, qpn())});
    known = ud_remotes_.end() - 1;
  }
  ud_ah_ = known->ah.get();
  ud_remote_qpn_ = remote.qpn & 0xffffff;
  ready_to_send_ = true;
}

}  // namespace rocehil::traffic::verbs
