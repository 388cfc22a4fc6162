#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rocehil/traffic/provider.hpp"

// What a queue pair is created and moved through RESET -> INIT -> RTR -> RTS with, as pure
// functions of the QP options, the device's limits and the peer's endpoint. Nothing here touches
// a device, so the tests hold every attribute set to the table in ibv_modify_qp(3) and every
// limit to what ibv_query_device reports.
namespace rocehil::traffic::verbs {

// The device and port facts the attributes depend on (ibv_query_device, ibv_query_port, and the
// source GID open_device chose).
struct DeviceLimits {
  std::string device;  // for messages: mlx5_0
  std::uint8_t port = 1;
  ibv_mtu active_mtu = IBV_MTU_1024;  // RoCE: from the netdev MTU (1500 -> 1024, 9000 -> 4096)
  int gid_index = 0;
  int max_qp_wr = 0;
  int max_sge = 0;
  int max_cqe = 0;
  int max_qp_rd_atom = 0;       // READs a QP can serve at once as the responder
  int max_qp_init_rd_atom = 0;  // READs a QP can have outstanding as the requester
  // rxe (kernel soft-RoCE) reads retry_cnt 7 as "retry forever" (rxe_comp.c leaves the count at
  // 7), where a ConnectX retries 7 times: a peer that vanished would never be reported.
  bool retries_forever_at_7 = false;
};
// The vendor_id rxe reports (rxe_param.h, since Linux 5.10; 0 before).
inline constexpr std::uint32_t rxe_vendor_id = 0xffffff;
DeviceLimits device_limits(std::string_view device, std::uint8_t port, int gid_index,
                           const ibv_device_attr& device_attr, const ibv_port_attr& port_attr);

// One ibv_modify_qp call: the attributes, the mask of those it sets, and its name for messages.
struct Transition {
  ibv_qp_attr attr{};
  int mask = 0;
  const char* name = "";
};

// The Q_Key of every UD QP the provider creates. Both sides are rocehil, so one constant replaces
// a field in the endpoint exchange; the high bit is clear because Q_Keys with it set are
// privileged.
inline constexpr std::uint32_t ud_qkey = 0x11111111;
// Bytes of GRH in front of every UD receive (for RoCEv2 over IPv4 the last 20 hold the IP header).
inline constexpr std::uint32_t grh_bytes = 40;
// Remote write and read need local write too (ibv_reg_mr(3)); atomics are not used.
inline constexpr int rc_access_flags =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
// RDMA READs in flight per QP: what ConnectX offers, capped by what the device reports.
inline constexpr int max_reads_in_flight = 16;
// 0.64 ms between RNR retries (IBTA table, code 12): long enough for a receiver to repost.
inline constexpr std::uint8_t min_rnr_timer = 12;
// RoCEv2 packets are routed: a hop limit of 1 (rc_pingpong's) would die at the first leaf.
inline constexpr std::uint8_t hop_limit = 64;

// The creation attributes: one SGE per send, one per receive (two on UD: the GRH lands in a
// scratch buffer of its own). Throws rocehil::Error (bad input) when a depth, the SGEs or the
// MTU are outside what the device reports.
ibv_qp_init_attr qp_init_attributes(const QpOptions& options, const DeviceLimits& limits,
                                    ibv_cq* cq);
std::uint32_t receive_sges(QpType type) noexcept;

// The responder resources this QP offers, which its endpoint tells the peer (Endpoint::max_reads).
std::uint8_t responder_resources(const DeviceLimits& limits) noexcept;

Transition to_init(QpType type, const DeviceLimits& limits);
Transition ud_to_rtr();
Transition ud_to_rts(std::uint32_t sq_psn);
// The path MTU is the smaller of the two QPs' and must not exceed this port's active MTU; the
// requester's READs in flight never exceed the responder resources the peer offers. Throws
// rocehil::Error (bad input) for an MTU the path cannot carry.
Transition rc_to_rtr(const QpOptions& options, const DeviceLimits& limits, const Endpoint& remote,
                     const ibv_gid& remote_gid);
Transition rc_to_rts(const QpOptions& options, const DeviceLimits& limits, const Endpoint& remote,
                     std::uint32_t sq_psn);
// The address vector of a RoCEv2 path (RC's IBV_QP_AV, UD's address handle): always global.
ibv_ah_attr address_vector(const DeviceLimits& limits, const ibv_gid& remote_gid,
                           std::uint8_t traffic_class, std::uint8_t sl);

// A CQ of `cqe` entries must hold a completion for every WR its QPs can have outstanding, or it
// overruns: the CQ goes to an error state and every QP on it stops, which a run would report as
// a fabric failure. Throws rocehil::Error (bad input) when a QP of these depths would not fit
// beside the `committed` ones.
void check_cq_room(const DeviceLimits& limits, int cqe, std::uint64_t committed,
                   std::uint32_t send_depth, std::uint32_t recv_depth);

// Empty when the GID at the source index is still the one the QPs were set up with; otherwise
// what happened (an address removed or changed on the netdev while rocehil ran) and what to do.
// `now` is nullopt when the slot is empty.
std::string gid_change(const DeviceLimits& limits, const ibv_gid& chosen,
                       const std::optional<ibv_gid>& now);

}  // namespace rocehil::traffic::verbs
