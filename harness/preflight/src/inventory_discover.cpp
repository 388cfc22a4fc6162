#include "rocehil/preflight/inventory_discover.hpp"

#include <sstream>

#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::preflight {

namespace {

// Which address sshd answered on tells discovery which interface is the management one.
constexpr const char* addresses_script =
    "echo \"ssh_connection $SSH_CONNECTION\"; ip -o -4 addr show 2>/dev/null | head -n 512";

std::string server_ip(std::string_view output) {
  std::istringstream in{std::string(output)};
  std::string word;
  if (!(in >> word) || word != "ssh_connection") return "";
  std::string client, client_port, server;
  in >> client >> client_port >> server;
  return server;
}

DiscoveredHost discover_one(const std::string& target, const DiscoverOptions& o) {
  DiscoveredHost host;
  host.target = target;
  remote::RunOptions run;
  run.timeout = o.timeout;
  const remote::CommandResult addresses = remote::run_command(
      remote::ssh_agent_command(target, o.ssh, {"sh", "-c", addresses_script}).argv, run);
  if (!addresses.succeeded()) {
    host.reason = addresses.ssh_reason();
    return host;
  }
  host.management_ip = server_ip(addresses.out);
  const auto first_nl = addresses.out.find('\n');
  const std::string_view listing = first_nl == std::string::npos
                                       ? std::string_view{}
                                       : std::string_view(addresses.out).substr(first_nl + 1);
  host.netdevs = fabric_netdevs(listing, host.management_ip);
  const remote::CommandResult probed = remote::run_command(
      remote::ssh_agent_command(target, o.ssh, probe_command("rocehil", host.netdevs)).argv, run);
  if (!probed.succeeded()) {
    host.reason = probed.ssh_reason();
    return host;
  }
  host.facts = parse_probe_output(probed.out);
  host.reachable = true;
  return host;
}

}  // namespace

std::vector<std::string> fabric_netdevs(std::string_view ip_addr_output,
                                        std::string_view management_ip) {
  std::vector<std::string> netdevs;
  std::istringstream in{std::string(ip_addr_output)};
  std::string line;
  while (std::getline(in, line)) {
    // "2: eth0    inet 10.0.0.1/24 brd 10.0.0.255 scope global eth0\       valid_lft ..."
    std::istringstream words(line);
    std::string index, name, family, cidr;
    if (!(words >> index >> name >> family >> cidr) || family != "inet") continue;
    if (const auto at = name.find('@'); at != std::string::npos) name.resize(at);
    const std::string ip = cidr.substr(0, cidr.find('/'));
    if (name == "lo" || ip.starts_with("127.") || ip == management_ip) continue;
    if (std::find(netdevs.begin(), netdevs.end(), name) == netdevs.end()) netdevs.push_back(name);
  }
  return netdevs;
}

std::vector<DiscoveredHost> discover_hosts(const std::vector<std::string>& targets,
                                           const DiscoverOptions& options) {
  std::vector<DiscoveredHost> hosts(targets.size());
  remote::fan_out(targets.size(), options.fanout, [&](std::size_t i) {
    try {
      hosts[i] = discover_one(targets[i], options);
    } catch (const std::exception& e) {
      hosts[i].target = targets[i];
      hosts[i].reason = e.what();
    }
  });
  return hosts;
}

}  // namespace rocehil::preflight
