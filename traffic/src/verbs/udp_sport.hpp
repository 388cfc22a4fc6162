#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace rocehil::traffic::verbs {

// Per-QP RoCEv2 UDP source ports through mlx5dv_modify_qp_udp_sport (rdma-core >= 29, ConnectX-5
// and later). The source port decides the ECMP path of every packet of a QP, so QP-scaling runs
// pin it.
//
// Why dlopen instead of linking libmlx5: the verbs provider must run on any RNIC (and link where
// only libibverbs is installed); a hard libmlx5 dependency would refuse to start on those hosts
// for a feature most runs do not use. Why an error instead of a silent fallback when it is
// missing: a run that asked for fixed source ports measures ECMP spreading; letting the NIC pick
// the ports would report numbers for a different experiment. So create_qp refuses, naming what is
// missing, and `udp_sport = 0` in QpOptions is the way to run without it. (A vendor-neutral
// alternative exists on kernels that derive the port from the GRH flow label, sport = 0xC000 |
// (label & 0x3fff), but whether a driver honours the label is not discoverable, so it is not used.)
class UdpSourcePort {
 public:
  // Loads libmlx5.so.1 once per process; never throws.
  static const UdpSourcePort& instance();

  // Empty when `device` can take per-QP source ports; otherwise why not, for a message.
  std::string unsupported_reason(ibv_device* device) const;

  // The QP must be RC (or UC) and in RTS. Returns 0 or an errno value.
  int set(ibv_qp* qp, std::uint16_t port) const noexcept;

 private:
  UdpSourcePort();

  using IsSupported = bool (*)(ibv_device*);
  using ModifyUdpSport = int (*)(ibv_qp*, std::uint16_t);
  IsSupported is_supported_ = nullptr;
  ModifyUdpSport modify_udp_sport_ = nullptr;
  std::string load_error_;
};

}  // namespace rocehil::traffic::verbs
