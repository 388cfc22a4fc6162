#include "rocehil/harness/host_ssh.hpp"

#include <fmt/format.h>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/names.hpp"

namespace rocehil::harness {

std::string remote_command_line(const std::vector<std::string>& remote_argv) {
  std::string line;
  for (const std::string& word : remote_argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

AgentCommand ssh_command(const inventory::Host& host, const std::vector<std::string>& remote_argv) {
  // The loader already refused anything else; checking again here keeps the launcher safe on its
  // own, whoever builds the Host.
  if (!inventory::is_valid_address(host.address))
    throw input_error(
        fmt::format("host '{}': address is not an IP address or DNS name", host.name));
  const inventory::SshSettings& s = host.ssh;
  AgentCommand command{.name = host.name,
                       .argv = {"ssh", "-T", "-o", "BatchMode=yes", "-o",
                                fmt::format("ConnectTimeout={}", s.connect_timeout_s), "-o",
                                "ServerAliveInterval=5"}};
  auto& argv = command.argv;
  if (!s.user.empty()) argv.insert(argv.end(), {"-l", s.user});
  if (s.port != 0) argv.insert(argv.end(), {"-p", std::to_string(s.port)});
  if (!s.identity.empty()) argv.insert(argv.end(), {"-i", s.identity});
  if (!s.known_hosts.empty())
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + s.known_hosts});
  if (!s.jump.empty()) argv.insert(argv.end(), {"-J", s.jump});
  for (const std::string& option : s.options) argv.insert(argv.end(), {"-o", option});
  argv.push_back(host.address);
  argv.push_back("--");
  argv.push_back(remote_command_line(remote_argv));
  return command;
}

}  // namespace rocehil::harness
