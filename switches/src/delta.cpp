#include "rocehil/switches/delta.hpp"

#include <fmt/format.h>

#include <map>

namespace rocehil::switches {

namespace {

// One counter's difference; absent (with a note) where it cannot be told.
class Differ {
 public:
  explicit Differ(PortDelta& d) : d_(d) {}

  std::optional<std::uint64_t> operator()(const std::optional<Count>& before,
                                          const std::optional<Count>& after,
                                          std::string_view what) {
    if (!before || !after) return std::nullopt;
    if (after->value >= before->value) return after->value - before->value;
    if (before->bits == 32 && after->bits == 32 && before->value <= 0xffffffffULL)
      return (after->value + (1ULL << 32)) - before->value;
    d_.notes.push_back(
        fmt::format("{} went backwards ({} -> {}): the counter was reset, so this "
                    "case has no value for it",
                    what, before->value, after->value));
    return std::nullopt;
  }

 private:
  PortDelta& d_;
};

std::optional<std::uint64_t> sum(std::initializer_list<std::optional<std::uint64_t>> parts) {
  std::optional<std::uint64_t> total;
  for (const auto& p : parts)
    if (p) total = total.value_or(0) + *p;
  return total;
}

// Packets of a direction: unicast + multicast + broadcast, absent unless unicast is served.
std::optional<std::uint64_t> packets(std::optional<std::uint64_t> ucast,
                                     std::optional<std::uint64_t> mcast,
                                     std::optional<std::uint64_t> bcast) {
  if (!ucast) return std::nullopt;
  return *ucast + mcast.value_or(0) + bcast.value_or(0);
}

PortDelta port_delta(const PortCounters& b, const PortCounters& a) {
  PortDelta d;
  d.if_index = a.if_index;
  d.name = a.name;
  d.descr = a.descr;
  d.alias = a.alias;
  Differ diff(d);
  d.in_octets = diff(b.in_octets, a.in_octets, "ifHCInOctets");
  d.out_octets = diff(b.out_octets, a.out_octets, "ifHCOutOctets");
  d.in_packets = packets(diff(b.in_ucast, a.in_ucast, "ifHCInUcastPkts"),
                         diff(b.in_multicast, a.in_multicast, "ifHCInMulticastPkts"),
                         diff(b.in_broadcast, a.in_broadcast, "ifHCInBroadcastPkts"));
  d.out_packets = packets(diff(b.out_ucast, a.out_ucast, "ifHCOutUcastPkts"),
                          diff(b.out_multicast, a.out_multicast, "ifHCOutMulticastPkts"),
                          diff(b.out_broadcast, a.out_broadcast, "ifHCOutBroadcastPkts"));
  d.in_discards = diff(b.in_discards, a.in_discards, "ifInDiscards");
  d.in_errors = diff(b.in_errors, a.in_errors, "ifInErrors");
  d.out_discards = diff(b.out_discards, a.out_discards, "ifOutDiscards");
  d.out_errors = diff(b.out_errors, a.out_errors, "ifOutErrors");
  for (std::size_t p = 0; p < 8; ++p) {
    d.pfc_rx[p] =
        diff(b.pfc_rx[p], a.pfc_rx[p], fmt::format("PFC frames received, priority {}", p));
    d.pfc_tx[p] = diff(b.pfc_tx[p], a.pfc_tx[p], fmt::format("PFC frames sent, priority {}", p));
  }
  d.queue_drops = diff(b.queue_drops, a.queue_drops, "egress queue drops");
  for (const auto& [queue, after] : a.queues) {
    const auto before = b.queues.find(queue);
    if (before == b.queues.end()) continue;  // appeared during the case: nothing to count from
    d.queues[queue] = {diff(before->second.sent_packets, after.sent_packets,
                            fmt::format("egress queue {} packets sent", queue)),
                       diff(before->second.dropped_packets, after.dropped_packets,
                            fmt::format("egress queue {} packets dropped", queue))};
  }
  return d;
}

}  // namespace

std::optional<std::uint64_t> PortDelta::drops() const {
  return sum({in_discards, out_discards, queue_drops});
}

std::optional<std::uint64_t> PortDelta::errors() const {
  return sum({in_errors, out_errors});
}

bool PortDelta::any_activity_of_concern() const {
  if (drops().value_or(0) > 0 || errors().value_or(0) > 0) return true;
  for (std::size_t p = 0; p < 8; ++p)
    if (pfc_rx[p].value_or(0) > 0 || pfc_tx[p].value_or(0) > 0) return true;
  return false;
}

const PortDelta* SwitchDelta::find_port(const std::string& port) const {
  for (auto field : {&PortDelta::name, &PortDelta::descr, &PortDelta::alias})
    for (const auto& p : ports)
      if (p.*field == port) return &p;
  return nullptr;
}

SwitchDelta delta(const SwitchSnapshot& before, const SwitchSnapshot& after) {
  SwitchDelta d;
  d.switch_name = after.switch_name;
  if (!before.answered() || !after.answered()) {
    d.error =
        !before.answered() ? "before the case: " + before.error : "after the case: " + after.error;
    return d;
  }
  d.seconds = static_cast<double>(after.unix_ns - before.unix_ns) / 1e9;
  d.pfc_served = before.pfc_served && after.pfc_served;
  d.queues_served = before.queues_served && after.queues_served;
  if (before.uptime_ticks && after.uptime_ticks && *after.uptime_ticks < *before.uptime_ticks) {
    d.error = fmt::format(
        "the agent restarted during the case (sysUpTime {} -> {} ticks): its "
        "counters may have been reset, so the case has no switch counters",
        *before.uptime_ticks, *after.uptime_ticks);
    return d;
  }
  std::map<std::uint32_t, const PortCounters*> earlier;
  for (const auto& p : before.ports) earlier[p.if_index] = &p;
  for (const auto& p : after.ports) {
    const auto it = earlier.find(p.if_index);
    // A port that appeared during the case (or was renumbered) has no start to count from.
    if (it == earlier.end() || it->second->name != p.name) continue;
    d.ports.push_back(port_delta(*it->second, p));
  }
  return d;
}

}  // namespace rocehil::switches
