#include "lossless/qos_profile.hpp"

#include <algorithm>

namespace rocehil::testbed::lossless {

DscpToTc sonic_dscp_to_tc() {
  DscpToTc map{};
  map.fill(1);
  map[3] = 3;
  map[4] = 4;
  map[5] = 2;
  map[8] = 0;
  map[46] = 5;
  map[48] = 6;
  return map;
}

PortProfile sonic_roce_profile(int port_mbps) {
  // Bytes the port sends in `ms` milliseconds, at least a jumbo frame's.
  const auto port_ms = [port_mbps](double ms) {
    return static_cast<std::uint32_t>(
        std::max(9216.0, static_cast<double>(port_mbps) * 1e6 / 8 * ms / 1e3));
  };
  PortProfile p;
  for (int q = 0; q < classes; ++q) {
    QueueProfile& queue = p.queues[q];
    queue.lossless = q == 3 || q == 4;
    queue.strict = q == 6;
    queue.weight = queue.lossless ? 15 : 14;
    queue.limit_bytes = port_ms(5);  // as today's tbf: 5 ms of queue before tail drop
    if (queue.lossless) queue.wred = {true, port_ms(1), port_ms(4), 0.10};
  }
  p.xoff_bytes = port_ms(2);
  p.xon_bytes = p.xoff_bytes - port_ms(1);
  p.headroom_bytes = port_ms(1);
  return p;
}

}  // namespace rocehil::testbed::lossless
