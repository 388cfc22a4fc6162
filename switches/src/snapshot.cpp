#include "rocehil/switches/snapshot.hpp"

#include <algorithm>
#include <map>

namespace rocehil::switches {

const std::vector<Oid>& counter_columns() {
  static const std::vector<Oid> columns = {
      mib::sys_uptime,
      mib::sys_name,
      mib::if_descr,
      mib::if_in_discards,
      mib::if_in_errors,
      mib::if_out_discards,
      mib::if_out_errors,
      mib::if_name,
      mib::if_hc_in_octets,
      mib::if_hc_in_ucast_pkts,
      mib::if_hc_in_multicast_pkts,
      mib::if_hc_in_broadcast_pkts,
      mib::if_hc_out_octets,
      mib::if_hc_out_ucast_pkts,
      mib::if_hc_out_multicast_pkts,
      mib::if_hc_out_broadcast_pkts,
      mib::if_alias,
      mib::pfc_priority_requests,
      mib::pfc_priority_indications,
      mib::queue_stats_value,
  };
  return columns;
}

const std::vector<Oid>& traffic_columns() {
  static const std::vector<Oid> columns = {
      mib::sys_uptime, mib::if_descr,        mib::if_in_discards,   mib::if_out_discards,
      mib::if_name,    mib::if_hc_in_octets, mib::if_hc_out_octets, mib::if_alias,
  };
  return columns;
}

const PortCounters* SwitchSnapshot::find_port(const std::string& name) const {
  for (auto field : {&PortCounters::name, &PortCounters::descr, &PortCounters::alias})
    for (const auto& p : ports)
      if (p.*field == name) return &p;
  return nullptr;
}

namespace {

std::optional<Count> count_of(const Value& v) {
  if (!is_count(v)) return std::nullopt;
  return Count{v.number, width_bits(v)};
}

// Adds `v` to a sum of counters. A sum's width is its narrowest part: a 32-bit part that wraps
// makes the sum wrap at 2^32 too, which the delta then reads as one wrap.
void add_to(std::optional<Count>& sum, const Count& v) {
  if (!sum) {
    sum = v;
    return;
  }
  sum->value += v.value;
  sum->bits = std::min(sum->bits, v.bits);
}

class Builder {
 public:
  explicit Builder(SwitchSnapshot& s) : s_(s) {}

  void add(const Varbind& row) {
    if (starts_with(row.oid, mib::sys_uptime)) {
      if (row.value.type == Value::Type::timeticks) s_.uptime_ticks = row.value.number;
      return;
    }
    if (starts_with(row.oid, mib::sys_name)) {
      if (row.value.type == Value::Type::octets) s_.sys_name = row.value.text;
      return;
    }
    if (text_column(row, mib::if_name, &PortCounters::name) ||
        text_column(row, mib::if_descr, &PortCounters::descr) ||
        text_column(row, mib::if_alias, &PortCounters::alias))
      return;
    static const std::pair<const Oid*, std::optional<Count> PortCounters::*> counters[] = {
        {&mib::if_hc_in_octets, &PortCounters::in_octets},
        {&mib::if_hc_in_ucast_pkts, &PortCounters::in_ucast},
        {&mib::if_hc_in_multicast_pkts, &PortCounters::in_multicast},
        {&mib::if_hc_in_broadcast_pkts, &PortCounters::in_broadcast},
        {&mib::if_hc_out_octets, &PortCounters::out_octets},
        {&mib::if_hc_out_ucast_pkts, &PortCounters::out_ucast},
        {&mib::if_hc_out_multicast_pkts, &PortCounters::out_multicast},
        {&mib::if_hc_out_broadcast_pkts, &PortCounters::out_broadcast},
        {&mib::if_in_discards, &PortCounters::in_discards},
        {&mib::if_in_errors, &PortCounters::in_errors},
        {&mib::if_out_discards, &PortCounters::out_discards},
        {&mib::if_out_errors, &PortCounters::out_errors},
    };
    for (const auto& [column, field] : counters)
      if (starts_with(row.oid, *column)) {
        const Oid index = index_after(row.oid, *column);
        if (index.size() == 1)
          if (auto c = count_of(row.value)) port(index[0]).*field = *c;
        return;
      }
    if (pfc_column(row, mib::pfc_priority_indications, &PortCounters::pfc_rx) ||
        pfc_column(row, mib::pfc_priority_requests, &PortCounters::pfc_tx))
      return;
    if (starts_with(row.oid, mib::queue_stats_value)) {
      // ifIndex.direction.queue.statType
      const Oid index = index_after(row.oid, mib::queue_stats_value);
      if (index.size() != 4 || index[1] != mib::queue_egress) return;
      const auto c = count_of(row.value);
      if (!c) return;
      PortCounters& p = port(index[0]);
      const std::uint32_t queue = index[2], type = index[3];
      if (type == mib::queue_stat_ucast_dropped_pkts ||
          type == mib::queue_stat_mcast_dropped_pkts) {
        add_to(p.queue_drops, *c);
        add_to(p.queues[queue].dropped_packets, *c);
        s_.queues_served = true;
      } else if (type == mib::queue_stat_ucast_sent_pkts ||
                 type == mib::queue_stat_mcast_sent_pkts) {
        add_to(p.queues[queue].sent_packets, *c);
      }
    }
  }

  void finish() {
    // Rows of vendor tables for an ifIndex IF-MIB does not list are dropped: they name no port.
    std::vector<PortCounters> named;
    for (auto& [index, p] : ports_)
      if (!p.name.empty() || !p.descr.empty()) named.push_back(std::move(p));
    s_.ports = std::move(named);
  }

 private:
  PortCounters& port(std::uint32_t if_index) {
    auto [it, fresh] = ports_.try_emplace(if_index);
    if (fresh) it->second.if_index = if_index;
    return it->second;
  }

  bool text_column(const Varbind& row, const Oid& column, std::string PortCounters::*field) {
    if (!starts_with(row.oid, column)) return false;
    const Oid index = index_after(row.oid, column);
    if (index.size() == 1 && row.value.type == Value::Type::octets)
      port(index[0]).*field = row.value.text;
    return true;
  }

  bool pfc_column(const Varbind& row, const Oid& column,
                  std::array<std::optional<Count>, 8> PortCounters::*field) {
    if (!starts_with(row.oid, column)) return false;
    const Oid index = index_after(row.oid, column);  // ifIndex.priority
    if (index.size() == 2 && index[1] < 8)
      if (const auto c = count_of(row.value)) {
        (port(index[0]).*field)[index[1]] = *c;
        s_.pfc_served = true;
      }
    return true;
  }

  SwitchSnapshot& s_;
  std::map<std::uint32_t, PortCounters> ports_;
};

}  // namespace

SwitchSnapshot build_snapshot(const std::string& switch_name, const std::vector<Varbind>& rows) {
  SwitchSnapshot s;
  s.switch_name = switch_name;
  Builder b(s);
  for (const auto& row : rows) b.add(row);
  b.finish();
  return s;
}

}  // namespace rocehil::switches
