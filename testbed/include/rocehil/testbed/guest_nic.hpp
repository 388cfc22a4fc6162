#pragma once

// The NIC of a --vm guest on a --lossless testbed (`rocehil testbed guest-nic`, started by `up`
// in each host's namespace before its QEMU): eight priority queues between QEMU's -netdev stream
// and the veth to the leaf, paced at the host rate, obeying PFC, holding the guest back instead
// of dropping (testbed/src/guest_nic/nic_loop.hpp).

#include <functional>
#include <string>
#include <string_view>

namespace rocehil::testbed {

// Enters network namespace `netns`, then runs the NIC of `config_path` until SIGTERM or SIGINT;
// SIGHUP reads its rate and PFC priorities again. `log` gets a line per event (start, QEMU
// connected or gone, a reload). Returns 0 on a clean stop; throws rocehil::Error when it cannot
// start.
int run_guest_nic(const std::string& netns, const std::string& config_path,
                  const std::function<void(std::string_view)>& log);

}  // namespace rocehil::testbed
