#pragma once

// What a --vm guest's NIC process is told (`rocehil testbed guest-nic`): the port it puts the
// guest's frames on, the socket QEMU connects to, the port's speed and the priorities it obeys
// PFC on. `up --vm --lossless` writes it (DIR/vm/<netns>.nic.json); the process reads it at start
// and again on SIGHUP, when `testbed set` has changed the host rate or the PFC priorities.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed::guest_nic {

struct NicConfig {
  std::string name;           // the host, "h1"
  std::string port;           // the veth to the leaf, in the host's namespace
  std::string socket_path;    // the unix stream socket QEMU's -netdev stream connects to
  std::string counters_path;  // shared counters (rocehil/testbed/shared_counters.hpp)
  int mbps = 0;               // the port's speed; 0: as fast as the port takes frames
  std::vector<int>
      pfc_priorities;  // obeyed when the switch sends PFC, and sent by the receive side
  // The transmit buffer: once it holds this much the NIC takes nothing more from the guest.
  std::uint32_t transmit_buffer_bytes = 64 * 1024;
  // The receive buffer toward the guest: XOFF over, XON under, and dropped past its size.
  std::uint32_t receive_xoff_bytes = 128 * 1024;
  std::uint32_t receive_xon_bytes = 64 * 1024;
  std::uint32_t receive_buffer_bytes = 4 * 1024 * 1024;
};

std::string to_json_text(const NicConfig& config);
// Throws rocehil::Error (bad input) naming `path`, the field and the fix.
NicConfig parse_nic_config(std::string_view text, const std::string& path);

}  // namespace rocehil::testbed::guest_nic
