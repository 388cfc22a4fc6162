#include "rocehil/testbed/ssh_files.hpp"

#include <fmt/format.h>

namespace rocehil::testbed {

std::string sshd_config(const Namespace& ns, const TestbedPaths& paths) {
  return fmt::format(
      "# Written by 'rocehil testbed up': the sshd of namespace {netns}.\n"
      "ListenAddress {address}:22\n"
      "HostKey {host_key}\n"
      "PidFile {pid}\n"
      "AuthorizedKeysFile {authorized}\n"
      "PubkeyAuthentication yes\n"
      "PasswordAuthentication no\n"
      "KbdInteractiveAuthentication no\n"
      "PermitRootLogin prohibit-password\n"
      "UsePAM no\n"
      "# The testbed directory may sit under /tmp, whose mode StrictModes rejects; the key files\n"
      "# are the testbed's own, written 0600 by ssh-keygen.\n"
      "StrictModes no\n"
      "X11Forwarding no\n"
      "PrintMotd no\n"
      "PrintLastLog no\n"
      "# The controller multiplexes sessions and fans out: allow many at once.\n"
      "MaxSessions 64\n"
      "MaxStartups 64:30:128\n"
      "Subsystem sftp internal-sftp\n"
      "# Every host namespace shares root's home: bash, asked by sshd to run a command, sources\n"
      "# ~/.bashrc unless it starts below another shell (SHLVL), and a .bashrc that sets up\n"
      "# pyenv or conda costs each session half a second of CPU. The testbed's sessions run\n"
      "# rocehil's own commands by absolute path and need nothing from it.\n"
      "SetEnv SHLVL=1\n",
      fmt::arg("netns", ns.netns), fmt::arg("address", ns.mgmt_address),
      fmt::arg("host_key", paths.host_key(ns)), fmt::arg("pid", paths.sshd_pid(ns)),
      fmt::arg("authorized", paths.authorized_keys()));
}

std::string ssh_client_config(const Topology& t, const TestbedPaths& paths) {
  std::string out = fmt::format("# Written by 'rocehil testbed up' for testbed {}: ssh -F {} h1\n",
                                t.id, paths.ssh_config());
  std::string names;
  for (const auto& ns : t.namespaces) {
    if (!runs_sshd(ns)) continue;
    out += fmt::format("Host {}\n  HostName {}\n", ns.name, ns.mgmt_address);
    names += " " + ns.name;
  }
  out += fmt::format(
      "Host{}\n"
      "  User root\n"
      "  IdentityFile {}\n"
      "  IdentitiesOnly yes\n"
      "  UserKnownHostsFile {}\n"
      "  StrictHostKeyChecking yes\n"
      "  BatchMode yes\n",
      names, paths.identity(), paths.known_hosts());
  return out;
}

std::string known_hosts(const Topology& t, const std::map<std::string, std::string>& public_keys) {
  std::string out;
  for (const auto& ns : t.namespaces) {
    const auto key = public_keys.find(ns.name);
    if (!runs_sshd(ns) || key == public_keys.end()) continue;
    // "type base64 comment": the comment is dropped, known_hosts wants "type base64".
    std::string_view line = key->second;
    const auto first_space = line.find(' ');
    const auto second_space = line.find(' ', first_space + 1);
    line = line.substr(0, second_space);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    out += fmt::format("{},{} {}\n", ns.name, ns.mgmt_address, line);
  }
  return out;
}

}  // namespace rocehil::testbed
