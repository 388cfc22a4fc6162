#pragma once

// The DPDK EAL, initialised once per process, and what rocehil keeps beside it: the arguments it
// was started with, per-port state that outlives a source, and finding a port by name.

#include <array>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpdk/headers.hpp"

namespace rocehil::capture::dpdk {

std::vector<std::string> split_blanks(std::string_view s);
std::string join(const std::vector<std::string>& words);

// key=value pairs of a device's arguments ("rx_pcap=/x.pcap,infinite_rx=0").
std::vector<std::pair<std::string, std::string>> device_kvargs(std::string_view args);
std::size_t kv_count(const std::vector<std::pair<std::string, std::string>>& kv,
                     std::string_view key);
std::string kv_value(const std::vector<std::pair<std::string, std::string>>& kv,
                     std::string_view key);
std::uint64_t kv_number(const std::vector<std::pair<std::string, std::string>>& kv,
                        std::string_view key, std::uint64_t fallback);

// What one port holds across the sources opened on it in this process.
struct PortSlot {
  bool in_use = false;
  bool used_before = false;
  rte_mempool* pool = nullptr;
  std::uint32_t pool_mbufs = 0;
  std::uint16_t pool_room = 0;
};

// Process-wide DPDK state, guarded by `mutex`. Never destroyed: a source destroyed during static
// destruction still finds it.
struct Eal {
  std::mutex mutex;
  bool initialised = false;
  std::vector<std::string> user_args;  // as the first successful open() gave them
  std::string failure;                 // why the last rte_eal_init failed
  // rte_eal_init may keep pointers into its argv: every attempt's lives as long as the process.
  std::list<std::vector<std::string>> argv_text;
  std::list<std::vector<char*>> argv;
  std::array<PortSlot, RTE_MAX_ETHPORTS> ports{};
  // The AF_PACKET sockets net_af_packet opened while rte_eal_init probed it: {fd, ifindex}.
  std::vector<std::pair<int, int>> packet_sockets;
  unsigned pool_generation = 0;
};

// The process's one Eal.
Eal& eal();
std::string dpdk_error(int errnum);
std::vector<std::string> port_names();
// "a, b, c", or "none".
std::string listed(const std::vector<std::string>& names);

// Initialises the EAL with the user's arguments (plus rocehil's defaults), or checks that the
// arguments equal those it was initialised with. Call with e.mutex held. Throws rocehil::Error.
void init_eal_locked(Eal& e, const std::string& text);
// The port named `wanted`, or the only port when `wanted` is empty. Throws rocehil::Error listing
// the ports.
std::uint16_t find_port(const std::string& wanted);

}  // namespace rocehil::capture::dpdk
