#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

// The NIC's per-QP rate limiter (packet pacing), as a pure function of the rate, the path MTU
// and the device's capabilities, so the attributes are tested without a device.
//
// Sources (rdma-core, fetched 2026-12): libibverbs/verbs.h (ibv_qp_rate_limit_attr: rate_limit
// in kbps, max_burst_sz in bytes, typical_pkt_sz in bytes, comp_mask; ibv_packet_pacing_caps:
// qp_rate_limit_min/max in kbps, supported_qpts), man ibv_modify_qp_rate_limit(3) (0 for burst
// and packet size: the device's defaults, the packet size then the port's MTU), and
// providers/mlx5/verbs.c mlx5_modify_qp_rate_limit: comp_mask must be 0, and a non-zero
// max_burst_sz or typical_pkt_sz is EINVAL unless the device has MLX5_IB_PP_SUPPORT_BURST,
// which only mlx5dv_query_device tells. perftest checks packet pacing by qp_rate_limit_max > 0
// alone (perftest_resources.c check_packet_pacing_support): mlx5 lists only RAW_PACKET in
// supported_qpts, yet paces RC QPs, so supported_qpts is not read here.
namespace rocehil::traffic::verbs {

struct PacingCaps {
  std::uint32_t min_kbps = 0;  // ibv_packet_pacing_caps.qp_rate_limit_min
  std::uint32_t max_kbps = 0;  // qp_rate_limit_max; 0: the device has no packet pacing
  // The device takes typical_pkt_sz and max_burst_sz (mlx5: MLX5_IB_PP_SUPPORT_BURST).
  bool burst_control = false;
};

struct RateLimitPlan {
  ibv_qp_rate_limit_attr attr{};
  std::string refused;  // empty: attr is what to ask for; else why the NIC cannot pace it
};

// `bits_per_s` for one QP whose packets carry up to `mtu` payload bytes. The rate is rounded
// to the nearest kbps; with burst control the typical packet is a full MTU packet (a bw
// workload's messages are MTU-sized but for the last), left to the device otherwise.
RateLimitPlan rate_limit_plan(double bits_per_s, std::uint32_t mtu, const PacingCaps& caps);

}  // namespace rocehil::traffic::verbs
