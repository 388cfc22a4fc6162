#include "soft_qp_budget.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

namespace rocehil::agent {

std::optional<std::string> soft_qps_refused(std::uint32_t qps, const FdLimit& limit) {
  const std::uint64_t needed = std::uint64_t{qps} + agent_reserved_fds;
  if (needed <= limit.soft) return std::nullopt;
  return fmt::format(
      "setup: {} soft QPs need {} file descriptors (one UDP socket each, and {} "
      "for the agent), and this agent may open {} (RLIMIT_NOFILE; hard limit {}): "
      "raise the agent's limit (ulimit -n, or LimitNOFILE= in its unit) or lower "
      "qps",
      qps, needed, agent_reserved_fds, limit.soft, limit.hard);
}

std::optional<std::string> make_room_for_soft_qps(std::uint32_t qps) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return std::nullopt;  // let the sockets say
  const std::uint64_t needed = std::uint64_t{qps} + agent_reserved_fds;
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < needed &&
      (r.rlim_max == RLIM_INFINITY || r.rlim_max > r.rlim_cur)) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max == RLIM_INFINITY ? needed : std::min<rlim_t>(r.rlim_max, needed);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  const auto value = [](rlim_t v) {
    return v == RLIM_INFINITY ? ~std::uint64_t{0} : static_cast<std::uint64_t>(v);
  };
  return soft_qps_refused(qps, {.soft = value(r.rlim_cur), .hard = value(r.rlim_max)});
}

}  // namespace rocehil::agent
