#pragma once

#include <algorithm>
#include <cstdint>

namespace rocehil::traffic::soft {

// The soft NIC's port: every QP of a provider leaves through it, so together they send no faster
// than the port's speed, as on an RNIC, where a QP that is not rate limited still waits its turn
// at the port. A virtual-time token bucket: a packet may leave once the port is free, and a port
// idle for a while lends at most `burst_ns` of credit, so a poll loop that wakes late catches up
// by a few packets, not by a window.
class PortPacer {
 public:
  PortPacer() = default;  // unpaced: the port's speed is not known
  // `gbps` > 0; `ip_overhead_bytes`: what each datagram carries on the wire besides the UDP
  // payload (Ethernet, IP and UDP headers), which a shaper counts too.
  PortPacer(double gbps, std::uint32_t ip_overhead_bytes)
      : ns_per_byte_(8.0 / gbps), overhead_bytes_(ip_overhead_bytes) {
    // Two 4 KiB-MTU packets, or 50 us at the port's speed, whichever is more.
    burst_ns_ =
        std::max<std::uint64_t>(static_cast<std::uint64_t>(2 * 4200 * ns_per_byte_), 50'000);
  }

  bool paced() const noexcept { return ns_per_byte_ > 0; }
  bool ready(std::uint64_t now_ns) const noexcept { return !paced() || now_ns >= free_at_ns_; }

  // A datagram of `udp_payload_bytes` left at `now_ns`.
  void on_sent(std::uint32_t udp_payload_bytes, std::uint64_t now_ns) noexcept {
    if (!paced()) return;
    const std::uint64_t earliest = now_ns > burst_ns_ ? now_ns - burst_ns_ : 0;
    const auto busy =
        static_cast<std::uint64_t>((udp_payload_bytes + overhead_bytes_) * ns_per_byte_);
    free_at_ns_ = std::max(free_at_ns_, earliest) + busy;
  }

 private:
  double ns_per_byte_ = 0;
  std::uint32_t overhead_bytes_ = 0;
  std::uint64_t burst_ns_ = 0;
  std::uint64_t free_at_ns_ = 0;
};

}  // namespace rocehil::traffic::soft
