#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/preflight/deploy.hpp"
#include "rocehil/preflight/preflight.hpp"

namespace rocehil::remote {
struct SshMultiplex;
}

namespace rocehil::preflight {

struct CheckOptions {
  std::size_t fanout = 32;                   // hosts probed at once
  std::chrono::milliseconds timeout{60000};  // per ssh command, connect included
  // Put this rocehil on hosts whose agent is missing or another version (deploy.hpp).
  DeployMode deploy = DeployMode::none;
  std::string local_binary;          // what --deploy=binary copies (this executable)
  std::vector<DebPackage> packages;  // what --deploy=package installs (read_deb_packages)
  std::string controller_version;    // "rocehil X.Y.Z"
  // The probe's ssh opens the caller's shared connection to each host (remote/host_ssh.hpp), so
  // what the caller runs there next skips the handshake; none: a connection of its own.
  const remote::SshMultiplex* multiplex = nullptr;
  // Called after each host, with the hosts done and the total, one call at a time (from the
  // fan-out's threads): the command line draws its progress bar from it.
  std::function<void(std::size_t done, std::size_t total)> on_progress;
};

// Probes every host over ssh, at most `fanout` at once, and compares what it finds with the
// inventory. A host that cannot be reached is reported as such with ssh's reason; the others are
// still checked. Never throws for a host's failure; throws rocehil::Error when the packages to
// deploy cannot be bundled.
CheckReport check_hosts(const inventory::Inventory& inventory,
                        const std::vector<const inventory::Host*>& hosts,
                        const std::string& selection, const CheckOptions& options);

// 0 when every host is ok or soft only, 1 when a check failed, 3 when a host was unreachable.
int check_exit_code(const CheckReport& report);

}  // namespace rocehil::preflight
