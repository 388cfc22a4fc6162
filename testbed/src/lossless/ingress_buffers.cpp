#include "lossless/ingress_buffers.hpp"

#include <algorithm>

namespace rocehil::testbed::lossless {

IngressBuffers::IngressBuffers(int ports, const PortProfile& profile)
    : xoff_(profile.xoff_bytes),
      xon_(std::min(profile.xon_bytes, profile.xoff_bytes)),
      headroom_(profile.headroom_bytes),
      accounts_(static_cast<std::size_t>(std::max(ports, 0)) * classes) {}

void IngressBuffers::retune(const PortProfile& profile) {
  xoff_ = profile.xoff_bytes;
  xon_ = std::min(profile.xon_bytes, profile.xoff_bytes);
  headroom_ = profile.headroom_bytes;
}

IngressBuffers::Arrival IngressBuffers::arrive(int port, int priority, std::uint32_t bytes) {
  Account& a = at(port, priority);
  if (static_cast<std::uint64_t>(a.bytes) + bytes > std::uint64_t{xoff_} + headroom_) {
    ++a.counters.lossless_drops;
    a.counters.lossless_dropped_bytes += bytes;
    return Arrival::dropped;
  }
  a.bytes += bytes;
  a.counters.peak_bytes = std::max(a.counters.peak_bytes, a.bytes);
  if (!a.xoff && a.bytes > xoff_) {
    a.xoff = true;
    ++a.counters.xoff_sent;
    return Arrival::admitted_xoff;
  }
  return Arrival::admitted;
}

bool IngressBuffers::depart(int port, int priority, std::uint32_t bytes) {
  Account& a = at(port, priority);
  a.bytes -= std::min(a.bytes, bytes);
  if (a.xoff && a.bytes <= xon_) {
    a.xoff = false;
    ++a.counters.xon_sent;
    return true;
  }
  return false;
}

void PauseState::received(std::uint8_t enable, const std::array<std::uint16_t, classes>& quanta,
                          std::uint64_t now_ns) {
  for (int p = 0; p < classes; ++p)
    if (enable >> p & 1) until_ns_[p] = now_ns + quanta_ns(quanta[p], port_bps_);
}

std::uint8_t PauseState::paused(std::uint64_t now_ns) const {
  std::uint8_t mask = 0;
  for (int p = 0; p < classes; ++p)
    if (until_ns_[p] > now_ns) mask |= static_cast<std::uint8_t>(1u << p);
  return mask;
}

std::uint64_t PauseState::next_end_ns(std::uint64_t now_ns) const {
  std::uint64_t next = 0;
  for (const std::uint64_t until : until_ns_)
    if (until > now_ns && (next == 0 || until < next)) next = until;
  return next;
}

}  // namespace rocehil::testbed::lossless
