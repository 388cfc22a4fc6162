#pragma once

// What a host lets one agent open of soft QPs. A soft QP is one UDP socket (its source port: the
// ECMP entropy), so each takes a file descriptor; measured on Debian 12 (the traffic library's
// create_qp, tx 64 / rx 176): 16.7 KiB of memory and 1 descriptor per QP, idle, plus the QP's
// buffer (2 x size). 16384 QPs: 16384 descriptors and ~270 MiB before buffers.

#include <cstdint>
#include <optional>
#include <string>

namespace rocehil::agent {

// Descriptors an agent keeps for itself beside its QPs: the controller's channel, the
// provider's sockets (port 4791, netlink), a capture, perftest's pipes.
inline constexpr std::uint64_t agent_reserved_fds = 64;

struct FdLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

// Why `qps` soft QPs will not fit under `limit`, or nothing when they do.
std::optional<std::string> soft_qps_refused(std::uint32_t qps, const FdLimit& limit);

// Raises this process's RLIMIT_NOFILE soft limit toward its hard one when `qps` soft QPs need
// more, then says why they still do not fit, or nothing.
std::optional<std::string> make_room_for_soft_qps(std::uint32_t qps);

}  // namespace rocehil::agent
