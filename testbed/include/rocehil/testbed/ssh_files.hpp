#pragma once

#include <map>
#include <string>

#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// Where a testbed keeps its files, all under its directory.
struct TestbedPaths {
  std::string dir;
  std::string state() const { return dir + "/testbed.json"; }
  std::string inventory() const { return dir + "/inventory.yaml"; }
  std::string ssh_dir() const { return dir + "/ssh"; }
  std::string run_dir() const { return dir + "/run"; }
  std::string identity() const { return ssh_dir() + "/id_ed25519"; }
  std::string authorized_keys() const { return ssh_dir() + "/authorized_keys"; }
  std::string known_hosts() const { return ssh_dir() + "/known_hosts"; }
  std::string ssh_config() const { return ssh_dir() + "/config"; }
  std::string host_key(const Namespace& ns) const {
    return ssh_dir() + "/" + ns.netns + ".host_key";
  }
  // The namespace's name is in the path, so sshd's command line carries the testbed id.
  std::string sshd_config(const Namespace& ns) const {
    return ssh_dir() + "/" + ns.netns + ".sshd_config";
  }
  std::string sshd_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".sshd.pid";
  }
  std::string sshd_log(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".sshd.log";
  }
};

// sshd_config for one namespace: its management address only, key-only root login, keys from
// the testbed's directory.
std::string sshd_config(const Namespace& ns, const TestbedPaths& paths);

// An ssh_config so `ssh -F DIR/ssh/config h1` works by name, as the inventory's settings do.
std::string ssh_client_config(const Topology& t, const TestbedPaths& paths);

// known_hosts lines: "h1,198.19.K.11 ssh-ed25519 AAAA...". `public_keys` maps namespace names to
// the public host key line ssh-keygen wrote.
std::string known_hosts(const Topology& t, const std::map<std::string, std::string>& public_keys);

}  // namespace rocehil::testbed
