#include "rocehil/remote/host_ssh.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/names.hpp"
#include "rocehil/remote/slurm.hpp"
#include "rocehil/remote/ssh_key_exchange.hpp"

namespace rocehil::remote {

std::string remote_command_line(const std::vector<std::string>& remote_argv) {
  std::string line;
  for (const std::string& word : remote_argv) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

namespace {

// Everything before the host: the options that pick how to reach it and log in.
std::vector<std::string> ssh_options(const inventory::Host& host, const SshMultiplex* multiplex) {
  const inventory::SshSettings& s = host.ssh;
  std::vector<std::string> argv = {"ssh", "-T",
                                   "-o",  "BatchMode=yes",
                                   "-o",  fmt::format("ConnectTimeout={}", s.connect_timeout_s),
                                   "-o",  "ServerAliveInterval=5"};
  if (multiplex != nullptr)
    argv.insert(argv.end(),
                {"-o", "ControlMaster=auto", "-o", "ControlPath=" + multiplex->control_dir + "/%C",
                 "-o", fmt::format("ControlPersist={}", multiplex->persist_s)});
  if (!s.user.empty()) argv.insert(argv.end(), {"-l", s.user});
  if (s.port != 0) argv.insert(argv.end(), {"-p", std::to_string(s.port)});
  if (!s.identity.empty()) argv.insert(argv.end(), {"-i", s.identity});
  if (!s.known_hosts.empty())
    argv.insert(argv.end(), {"-o", "UserKnownHostsFile=" + s.known_hosts});
  if (!s.jump.empty()) argv.insert(argv.end(), {"-J", s.jump});
  for (const std::string& option : s.options) argv.insert(argv.end(), {"-o", option});
  // Last, so that the inventory's own KexAlgorithms (ssh keeps the first value) would win; left
  // out then to keep the command line plain.
  const bool own_key_exchanges = std::any_of(s.options.begin(), s.options.end(), [](const auto& o) {
    return inventory::ssh_option_sets(o, "KexAlgorithms");
  });
  if (!own_key_exchanges && !ssh_key_exchange_option().empty())
    argv.insert(argv.end(), {"-o", ssh_key_exchange_option()});
  return argv;
}

}  // namespace

std::vector<std::string> ssh_multiplex_exit(const inventory::Host& host,
                                            const SshMultiplex& multiplex) {
  std::vector<std::string> argv = ssh_options(host, &multiplex);
  argv.insert(argv.end(), {"-O", "exit", host.address});
  return argv;
}

AgentCommand host_command(const inventory::Host& host, const std::vector<std::string>& remote_argv,
                          const SshMultiplex* multiplex) {
  if (host.launcher == inventory::Launcher::local) {
    AgentCommand local{.name = host.name, .argv = {}};
    if (!host.netns.empty()) local.argv = {"ip", "netns", "exec", host.netns};
    local.argv.insert(local.argv.end(), remote_argv.begin(), remote_argv.end());
    return local;
  }
  if (host.launcher == inventory::Launcher::slurm)
    return {
        .name = host.name,
        .argv = srun_argv(
            require_slurm_allocation(fmt::format("host '{}': launcher slurm", host.name)).job_id,
            host.name, remote_argv)};
  // The loader already refused anything else; checking again here keeps the launcher safe on its
  // own, whoever builds the Host.
  if (!inventory::is_valid_address(host.address))
    throw input_error(
        fmt::format("host '{}': address is not an IP address or DNS name", host.name));
  AgentCommand command{.name = host.name, .argv = ssh_options(host, multiplex)};
  auto& argv = command.argv;
  argv.push_back(host.address);
  argv.push_back("--");
  argv.push_back(remote_command_line(remote_argv));
  return command;
}

}  // namespace rocehil::remote
