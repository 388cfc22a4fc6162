#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "rocehil/preflight/host_facts.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::preflight {

// `rocehil inventory discover`: probe hosts that are not in an inventory yet and write the
// skeleton of one, for a person to check and complete.

struct DiscoveredHost {
  std::string target;  // as given on the command line: a name or an address
  bool reachable = false;
  std::string reason;                // ssh's reason when not reachable
  std::string management_ip;         // the address sshd answered on (SSH_CONNECTION)
  std::vector<std::string> netdevs;  // interfaces with a global IPv4 address, management excluded
  HostFacts facts;
};

struct DiscoverOptions {
  remote::SshOptions ssh;
  std::size_t fanout = 32;
  std::chrono::milliseconds timeout{60000};
};

std::vector<DiscoveredHost> discover_hosts(const std::vector<std::string>& targets,
                                           const DiscoverOptions& options);

// Pure: `ip -o -4 addr show` output and SSH_CONNECTION's server address -> the netdevs worth
// describing (not lo, not the one ssh came in on), in order.
std::vector<std::string> fabric_netdevs(std::string_view ip_addr_output,
                                        std::string_view management_ip);

// Pure: the YAML skeleton. RDMA hosts get one NIC per Ethernet port (device, port, the RoCE v2
// GID index carrying the netdev's IPv4 address, netdev, ip, speed, MTU, NUMA node, the GPU on
// the same PCIe switch); hosts without an RDMA device get their fabric netdevs and provider soft.
std::string inventory_skeleton(const std::vector<DiscoveredHost>& hosts,
                               const remote::SshOptions& ssh);

}  // namespace rocehil::preflight
