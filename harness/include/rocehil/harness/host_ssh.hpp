#pragma once

#include <string>
#include <vector>

#include "rocehil/harness/agent_link.hpp"
#include "rocehil/inventory/inventory.hpp"

namespace rocehil::harness {

// The ssh command line that reaches an inventory host with its settings: BatchMode (keys only,
// never a password prompt), ConnectTimeout, user, port, identity, known_hosts, jump host and the
// inventory's -o options, then `HOST -- 'word' 'word' ...` with every remote word shell-quoted,
// since sshd hands the remote command to the user's shell as one string.
AgentCommand ssh_command(const inventory::Host& host, const std::vector<std::string>& remote_argv);

// The remote command string ssh sends: the words shell-quoted and joined by spaces.
std::string remote_command_line(const std::vector<std::string>& remote_argv);

}  // namespace rocehil::harness
