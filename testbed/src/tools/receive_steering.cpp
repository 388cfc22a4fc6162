#include "tools/receive_steering.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>

#include "tools/process.hpp"

namespace rocehil::testbed {

void steer_by_flow(const std::string& netns, const std::vector<std::string>& ifnames) {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus <= 1) return;
  const std::uint64_t all = cpus >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << cpus) - 1;
  const std::string mask = fmt::format("{:x}\n", all);
  for (const auto& ifname : ifnames)
    run_checked(fmt::format("spreading {}'s {} over the CPUs by flow", netns, ifname),
                {"ip", "netns", "exec", netns, "tee",
                 fmt::format("/sys/class/net/{}/queues/rx-0/rps_cpus", ifname)},
                mask);
}

}  // namespace rocehil::testbed
