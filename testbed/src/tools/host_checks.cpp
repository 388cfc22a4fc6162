#include "tools/host_checks.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "rocehil/common/error.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

std::string_view package_of(std::string_view tool) {
  static constexpr std::pair<std::string_view, std::string_view> packages[] = {
      {"ip", "iproute2"},
      {"tc", "iproute2"},
      {"nft", "nftables"},
      {"sshd", "openssh-server"},
      {"ssh-keygen", "openssh-client"},
      {"ssh", "openssh-client"},
      {"sysctl", "procps"},
      {"munged", "munge"},
      {"slurmctld", "slurmctld"},
      {"slurmd", "slurmd"},
      {"sinfo", "slurm-client"},
      {"snmpd", "snmpd"},
      {"lldpd", "lldpd"},
      {"lldpcli", "lldpd"},
      {"vtysh", "frr"},
      {"qemu-system-x86_64", "qemu-system-x86"},
      {"modprobe", "kmod"},
      {"cpio", "cpio"},
      {"find", "findutils"},
  };
  for (const auto& [t, p] : packages)
    if (t == tool) return p;
  return tool;
}

}  // namespace

void require_root(std::string_view command) {
  if (::geteuid() == 0) return;
  throw input_error(fmt::format(
      "'rocehil testbed {}' needs root (network namespaces, veths, qdiscs, nftables); run it as "
      "root, e.g. 'sudo rocehil testbed {} ...'",
      command, command));
}

void require_tools(const std::vector<std::string_view>& tools) {
  for (auto tool : tools) {
    if (!find_in_path(tool).empty()) continue;
    throw input_error(
        fmt::format("'{}' is not in PATH; install Debian's {} ('apt-get install {}', or "
                    "scripts/install-deps.sh in the source tree)",
                    tool, package_of(tool), package_of(tool)));
  }
}

}  // namespace rocehil::testbed
