#include "dataplane/pfc_watchdog.hpp"

#include <algorithm>

namespace rocehil::testbed::dataplane {

PfcWatchdog::PfcWatchdog(int ports, std::uint64_t detection_ns, std::uint64_t restoration_ns)
    : detection_ns_(detection_ns),
      restoration_ns_(restoration_ns),
      queues_(static_cast<std::size_t>(std::max(ports, 0)) * 8) {}

void PfcWatchdog::set_times(std::uint64_t detection_ns, std::uint64_t restoration_ns) {
  detection_ns_ = detection_ns;
  restoration_ns_ = restoration_ns;
}

void PfcWatchdog::pfc_received(int port, int priority, std::uint64_t now_ns) {
  at(port, priority).last_pfc = now_ns;
}

PfcWatchdog::Event PfcWatchdog::check(int port, int priority, bool stuck, std::uint64_t now_ns) {
  Queue& q = at(port, priority);
  if (q.storm) {
    if (now_ns - q.last_pfc < restoration_ns_) return Event::none;
    q.storm = false;
    q.stuck = false;
    return Event::restored;
  }
  if (!stuck || detection_ns_ == 0) {
    q.stuck = false;
    return Event::none;
  }
  if (!q.stuck) {
    q.stuck = true;
    q.stuck_since = now_ns;
  }
  if (now_ns - q.stuck_since < detection_ns_) return Event::none;
  q.storm = true;
  q.stuck = false;
  return Event::storm_detected;
}

std::uint64_t PfcWatchdog::next_check_ns(int port, int priority) const {
  const Queue& q = at(port, priority);
  if (q.storm) return q.last_pfc + restoration_ns_;
  if (q.stuck && detection_ns_ != 0) return q.stuck_since + detection_ns_;
  return 0;
}

}  // namespace rocehil::testbed::dataplane
