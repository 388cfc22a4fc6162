#pragma once

// `inventory check --deploy`: putting this rocehil on the hosts, in one of two ways.
// - package (the default): the Debian packages (rocehil, and rocehil-dpdk where given) copied over
//   ssh and installed with apt-get, the way operators install software; the agent is then
//   /usr/bin/rocehil. Hosts that share one dpkg database (the testbed's namespaces) wait for its
//   lock in turn.
// - binary: this executable copied to each host's `agent` path, for hosts without apt.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/preflight/host_facts.hpp"
#include "rocehil/preflight/preflight.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::preflight {

enum class DeployMode { none, package, binary };

// "package", "binary"; throws input_error for anything else.
DeployMode parse_deploy_mode(std::string_view text);

struct DebPackage {
  std::string path;
  std::string name;     // rocehil or rocehil-dpdk
  std::string version;  // "0.1.0"
};

// Each file's Package and Version, read with dpkg-deb. Throws input_error naming the file when it
// is not one of rocehil's packages, when none is the rocehil package itself, when two are the same
// package, or when a version is not `version` (this controller's: agents must match it).
std::vector<DebPackage> read_deb_packages(const std::vector<std::string>& files,
                                          std::string_view version);

// Whether a host, as probed, needs the deploy: its agent is not `agent_version` ("rocehil
// 0.1.0"), or (package) one of the packages is not installed at its version.
bool needs_deploy(const HostFacts& facts, DeployMode mode, std::string_view agent_version,
                  const std::vector<DebPackage>& packages);

// What a host that needs nothing is told.
CheckItem nothing_to_deploy(DeployMode mode, std::string_view agent_version,
                            const std::vector<DebPackage>& packages);

// The host side of a package deploy: a POSIX sh script that unpacks the tar of .deb files on its
// stdin into a temporary folder, installs them with apt-get (through sudo -n when not root) and
// lists rocehil's packages before and after. It exits 0 and says what happened in lines that
// package_install_item reads.
std::string_view package_install_script();

// The deploy item from the script's run on `host`.
CheckItem package_install_item(const inventory::Host& host, const remote::CommandResult& run,
                               const std::vector<DebPackage>& packages);

// The binary deploy: copies `local_binary` to the host's agent path (a temporary file renamed
// over it, so a running agent keeps its inode and a half-copied binary is never on the path).
CheckItem copy_binary(const inventory::Host& host, const std::string& local_binary,
                      std::string_view agent_version, std::chrono::milliseconds timeout);

}  // namespace rocehil::preflight
