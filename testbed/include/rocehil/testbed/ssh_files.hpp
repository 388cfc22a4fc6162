#pragma once

#include <map>
#include <string>

#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// sshd_config for one namespace: its management address only, key-only root login, keys from
// the testbed's directory.
std::string sshd_config(const Namespace& ns, const TestbedPaths& paths);

// An ssh_config so `ssh -F DIR/ssh/config h1` works by name, as the inventory's settings do.
std::string ssh_client_config(const Topology& t, const TestbedPaths& paths);

// known_hosts lines: "h1,198.19.K.11 ssh-ed25519 AAAA...". `public_keys` maps namespace names to
// the public host key line ssh-keygen wrote.
std::string known_hosts(const Topology& t, const std::map<std::string, std::string>& public_keys);

}  // namespace rocehil::testbed
