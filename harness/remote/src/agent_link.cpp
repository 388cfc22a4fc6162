// The ssh command line and closing links together; the process launcher is in agent_process.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::remote {

namespace {

bool host_name_is_safe(const std::string& host) {
  if (host.empty() || host.front() == '-') return false;
  return std::none_of(host.begin(), host.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; });
}

}  // namespace

std::string shell_quote(std::string_view word) {
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'')
      quoted += "'\\''";  // close, an escaped quote, reopen
    else
      quoted += c;
  }
  quoted += '\'';
  return quoted;
}

AgentCommand ssh_agent_command(const std::string& host, const SshOptions& ssh,
                               const std::vector<std::string>& remote_argv) {
  if (!host_name_is_safe(host))
    throw input_error(fmt::format(
        "ssh host '{}' is not a host name: it is empty, starts with '-' or contains whitespace "
        "or control characters",
        host));
  AgentCommand command{.name = host,
                       .argv = {"ssh", "-T", "-o", "BatchMode=yes", "-o",
                                fmt::format("ConnectTimeout={}", ssh.connect_timeout_s), "-o",
                                "ServerAliveInterval=5"}};
  auto& argv = command.argv;
  if (!ssh.config_file.empty()) argv.insert(argv.end(), {"-F", ssh.config_file});
  if (!ssh.user.empty()) argv.insert(argv.end(), {"-l", ssh.user});
  if (ssh.port != 0) argv.insert(argv.end(), {"-p", std::to_string(ssh.port)});
  if (!ssh.identity.empty()) argv.insert(argv.end(), {"-i", ssh.identity});
  argv.push_back(host);
  argv.push_back("--");
  std::string remote;
  for (const std::string& word : remote_argv) {
    if (!remote.empty()) remote += ' ';
    remote += shell_quote(word);
  }
  argv.push_back(remote);
  return command;
}

void close_all(std::vector<std::unique_ptr<AgentLink>>& links) {
  for (auto& link : links)
    if (link) link->close_input();
  links.clear();
}

}  // namespace rocehil::remote
