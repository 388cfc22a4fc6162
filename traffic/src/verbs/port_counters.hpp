#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace rocehil::traffic::verbs {

// The port's counters as the kernel exports them: every readable file of
//   <sysfs_root>/<device>/ports/<port>/counters/     (IBTA: port_xmit_data, port_rcv_packets, ...)
//   <sysfs_root>/<device>/ports/<port>/hw_counters/  (driver: np_cnp_sent, rp_cnp_handled,
//       np_ecn_marked_roce_packets, out_of_sequence, packet_seq_err, local_ack_timeout_err, ...)
// keyed by file name. These are the hardware's own numbers, per port: verbs has no per-QP packet
// counters, so a run reads them before and after and reports the difference. Not a hot path.
// Note the IBTA port_xmit_data / port_rcv_data count 4-byte words, as the spec defines them.
// Files that cannot be read or parsed (some drivers expose write-only or text entries) are
// skipped. Throws rocehil::Error when neither directory exists.
std::map<std::string, std::uint64_t> read_port_counters(
    std::string_view device, std::uint8_t port,
    std::string_view sysfs_root = "/sys/class/infiniband");

}  // namespace rocehil::traffic::verbs
