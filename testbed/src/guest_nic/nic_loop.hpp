#pragma once

// A --vm guest's NIC on a lossless fabric (`rocehil testbed guest-nic`), in the host's network
// namespace between QEMU and the veth to the leaf. A virtio NIC cannot obey PFC, and QEMU's tap
// takes every frame the guest sends whatever the wire does, so a paused guest would overrun the
// leaf's headroom. This process is the NIC instead: QEMU's -netdev stream connects to its unix
// socket; what the guest sends waits in eight priority queues (DSCP to priority as a ConnectX
// trusting DSCP), goes onto the veth at the port's speed, and a priority the switch pauses stays
// in its queue. Once the queues hold their buffer the process stops reading QEMU's socket: QEMU
// stops taking from the virtio ring and the guest's rxe waits (backpressure, not loss). Toward
// the guest it sends PFC when its receive buffer fills, as a ConnectX does. Counters: a shared
// counters file with two ports, the veth and "guest" (shared_counters.hpp).
//
// It waits in epoll (sockets, a timerfd, signals): an idle NIC costs no CPU.

#include <functional>
#include <string>
#include <string_view>

namespace rocehil::testbed::guest_nic {

using LogLine = std::function<void(std::string_view)>;

// Runs the NIC of `config_path` (nic_config.hpp) until SIGTERM or SIGINT; SIGHUP reads the file
// again. Returns 0 on a clean stop. Throws rocehil::Error when it cannot start (the port missing,
// the socket taken); a reload that fails keeps the old settings and says why through `log`.
int run_nic(const std::string& config_path, const LogLine& log);

}  // namespace rocehil::testbed::guest_nic
