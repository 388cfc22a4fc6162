#pragma once

#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::remote {

// The command that runs `remote_argv` on an inventory host. A host with `launcher: local` runs it
// as a process of this machine, never through a shell (inside the host's network namespace when
// it names one). A host with `launcher: slurm` runs it as a step of the Slurm allocation rocehil
// runs in, on the node named as the host (slurm.hpp). Otherwise it is
// the ssh command line that reaches the host with its settings: BatchMode (keys only,
// never a password prompt), ConnectTimeout, user, port, identity, known_hosts, jump host and the
// inventory's -o options, then `HOST -- 'word' 'word' ...` with every remote word shell-quoted,
// since sshd hands the remote command to the user's shell as one string.
//
// With `multiplex`, ssh shares one connection per host (ControlMaster=auto, a socket in the
// multiplex's private directory, kept `persist_s` after its last session): a run that starts
// agents on a host case after case pays for the handshake once.
struct SshMultiplex {
  std::string control_dir;  // private (0700); sockets are named by ssh's %C hash
  int persist_s = 60;
};
AgentCommand host_command(const inventory::Host& host, const std::vector<std::string>& remote_argv,
                          const SshMultiplex* multiplex = nullptr);

// `ssh -O exit` for the host's shared connection: stops the master ssh left in the background.
// Only for hosts reached over ssh.
std::vector<std::string> ssh_multiplex_exit(const inventory::Host& host,
                                            const SshMultiplex& multiplex);

// The remote command string ssh sends: the words shell-quoted and joined by spaces.
std::string remote_command_line(const std::vector<std::string>& remote_argv);

}  // namespace rocehil::remote
