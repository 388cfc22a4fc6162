#include "rocehil/run/switch_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "rocehil/switches/port_json.hpp"

namespace rocehil::run {

namespace {

using switches::PortDelta;
using switches::SwitchDelta;

// The switch_* metrics, indexed ones by name (their reason covers every priority).
constexpr const char* switch_metric_names[] = {"switch_drops", "switch_errors", "switch_pfc_rx",
                                               "switch_pfc_tx", "switch_spine_imbalance"};

bool is_spine(const inventory::Switch* s) {
  return s && (s->role == "spine" || s->role == "superspine");
}

// "leaf01:Ethernet1/1 12, spine02:Ethernet1/3 2": the largest parts of a sum, five at most.
class Parts {
 public:
  void add(const std::string& where, double value) {
    if (value > 0) parts_.push_back({value, where});
  }
  std::string text(std::string_view unit = "") const {
    auto sorted = parts_;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string out;
    for (std::size_t i = 0; i < sorted.size() && i < 5; ++i)
      out += fmt::format("{}{} {:g}{}", i ? ", " : "", sorted[i].second, sorted[i].first, unit);
    if (sorted.size() > 5) out += fmt::format(", and {} more", sorted.size() - 5);
    return out;
  }
  bool empty() const { return parts_.empty(); }

 private:
  std::vector<std::pair<double, std::string>> parts_;
};

std::string port_name(const SwitchDelta& d, const PortDelta& p) {
  return fmt::format("{}:{}", d.switch_name, p.name.empty() ? p.descr : p.name);
}

// The reason every switch_* metric is absent when one of the case's switches did not answer.
std::string unanswered(const std::vector<SwitchDelta>& deltas) {
  for (const auto& d : deltas)
    if (!d.answered()) return fmt::format("switch {} gave no counters: {}", d.switch_name, d.error);
  return {};
}

// A sum over every port of every switch, or why it cannot be told.
void port_sum(suites::Measured& m, const std::string& key, const std::vector<SwitchDelta>& deltas,
              std::optional<std::uint64_t> (PortDelta::*value)() const, std::string_view counters) {
  double total = 0;
  Parts parts;
  for (const auto& d : deltas) {
    bool served = false;
    for (const auto& p : d.ports)
      if (const auto v = (p.*value)()) {
        served = true;
        total += static_cast<double>(*v);
        parts.add(port_name(d, p), static_cast<double>(*v));
      }
    if (!served) {
      m.absent(key, fmt::format("switch {} serves no {} for its ports", d.switch_name, counters));
      return;
    }
  }
  m.values[key] = total;
  if (!parts.empty()) m.where[key] = parts.text();
}

void pfc_sums(suites::Measured& m, const std::vector<SwitchDelta>& deltas) {
  for (const auto& d : deltas)
    if (!d.pfc_served) {
      const std::string why = fmt::format(
          "switch {} does not serve CISCO-PFC-EXT-MIB (PFC frames per port and "
          "priority)",
          d.switch_name);
      m.absent("switch_pfc_rx", why);
      m.absent("switch_pfc_tx", why);
      return;
    }
  for (const auto& [name, field] : {std::pair{"switch_pfc_rx", &PortDelta::pfc_rx},
                                    std::pair{"switch_pfc_tx", &PortDelta::pfc_tx}})
    for (std::size_t prio = 0; prio < 8; ++prio) {
      double total = 0;
      Parts parts;
      for (const auto& d : deltas)
        for (const auto& p : d.ports)
          if (const auto v = (p.*field)[prio]) {
            total += static_cast<double>(*v);
            parts.add(port_name(d, p), static_cast<double>(*v));
          }
      const std::string key = fmt::format("{}[{}]", name, prio);
      m.values[key] = total;
      if (!parts.empty()) m.where[key] = parts.text();
    }
}

void spine_imbalance(suites::Measured& m, const inventory::Inventory& inv,
                     const std::vector<SwitchDelta>& deltas) {
  const std::string key = "switch_spine_imbalance";
  std::vector<std::pair<std::string, double>> loads;
  for (const auto& d : deltas) {
    if (!is_spine(inv.find_switch(d.switch_name))) continue;
    // The spine's leaf-facing ports, as the links name them: each packet crossing the spine
    // enters it once on one of them.
    double octets = 0;
    int ports = 0;
    for (const auto& l : inv.links)
      for (const auto& [here, there] : {std::pair{&l.a, &l.b}, std::pair{&l.b, &l.a}}) {
        const inventory::Switch* far = inv.find_switch(there->node);
        if (here->node != d.switch_name || !far || far->role != "leaf") continue;
        const PortDelta* p = d.find_port(here->port);
        if (!p || !p->in_octets) {
          m.absent(key, fmt::format("spine {} has no ifHCInOctets for its port {} (link {})",
                                    d.switch_name, here->port, l.name));
          return;
        }
        octets += static_cast<double>(*p->in_octets);
        ++ports;
      }
    if (ports == 0) {
      m.absent(key, fmt::format("the inventory's links name no leaf-facing port of spine {}",
                                d.switch_name));
      return;
    }
    loads.push_back({d.switch_name, octets});
  }
  if (loads.size() < 2) {
    m.absent(key, "the case crosses fewer than two spines that answered SNMP");
    return;
  }
  double sum = 0, most = 0;
  Parts parts;
  for (const auto& [name, octets] : loads) {
    sum += octets;
    most = std::max(most, octets);
    parts.add(name, octets);
  }
  if (sum == 0) {
    m.absent(key, "no traffic crossed the spines");
    return;
  }
  m.values[key] = most / (sum / static_cast<double>(loads.size()));
  m.where[key] = parts.text(" B");
}

}  // namespace

std::vector<std::string> switches_in_scope(const inventory::Inventory& inv,
                                           const std::vector<std::string>& hosts) {
  std::set<std::string> chosen, racks;
  for (const auto& name : hosts) {
    const inventory::Host* h = inv.find_host(name);
    if (!h) continue;
    for (const auto& nic : h->nics)
      for (const auto& l : inv.links)
        if (l.name == nic.link)
          for (const auto* end : {&l.a, &l.b})
            if (inv.find_switch(end->node)) chosen.insert(end->node);
    if (h->rack.empty()) continue;
    racks.insert(h->rack);
    if (const inventory::Rack* r = inv.find_rack(h->rack); r && !r->leaf.empty())
      chosen.insert(r->leaf);
    for (const auto& s : inv.switches)
      if (s.role == "leaf" && s.rack == h->rack) chosen.insert(s.name);
  }
  const bool unknown = chosen.empty() && racks.empty();
  std::vector<std::string> out;
  for (const auto& s : inv.switches)
    if (s.snmp && (unknown || chosen.contains(s.name) || (racks.size() > 1 && is_spine(&s))))
      out.push_back(s.name);
  return out;
}

suites::Measured switches_not_polled() {
  suites::Measured m;
  for (const char* key : switch_metric_names)
    m.absent(key,
             "this run polled no switch: none in the inventory has snmp settings, or the run was "
             "given --no-switches");
  return m;
}

suites::Measured switch_metrics(const inventory::Inventory& inv,
                                const std::vector<SwitchDelta>& deltas) {
  suites::Measured m;
  if (deltas.empty()) {
    for (const char* key : switch_metric_names)
      m.absent(key, "no switch the case can cross has snmp settings in the inventory");
    return m;
  }
  if (const std::string why = unanswered(deltas); !why.empty()) {
    for (const char* key : switch_metric_names) m.absent(key, why);
    return m;
  }
  port_sum(m, "switch_drops", deltas, &PortDelta::drops, "discard or queue drop counters");
  port_sum(m, "switch_errors", deltas, &PortDelta::errors, "error counters");
  pfc_sums(m, deltas);
  spine_imbalance(m, inv, deltas);
  return m;
}

nlohmann::json switches_json(const std::vector<SwitchDelta>& deltas) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : deltas) {
    nlohmann::json s{{"switch", d.switch_name}, {"answered", d.answered()}};
    if (!d.answered()) {
      s["error"] = d.error;
      out.push_back(std::move(s));
      continue;
    }
    s["seconds"] = d.seconds;
    s["pfc_mib"] = d.pfc_served;
    s["queue_mib"] = d.queues_served;
    s["ports"] = nlohmann::json::array();
    std::size_t idle = 0;
    for (const auto& p : d.ports) {
      const bool moved = p.in_octets.value_or(0) > 0 || p.out_octets.value_or(0) > 0;
      if (!moved && !p.any_activity_of_concern() && p.notes.empty()) {
        ++idle;
        continue;
      }
      s["ports"].push_back(switches::to_json(p));
    }
    s["idle_ports"] = idle;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<HostSwitchPort> host_switch_ports(const inventory::Inventory& inv,
                                              const std::vector<std::string>& hosts) {
  std::vector<HostSwitchPort> out;
  for (const auto& name : hosts)
    if (const inventory::Host* h = inv.find_host(name))
      for (const auto& nic : h->nics)
        for (const auto& l : inv.links) {
          if (nic.link.empty() || l.name != nic.link) continue;
          for (const auto& [here, there] : {std::pair{&l.a, &l.b}, std::pair{&l.b, &l.a}})
            if (here->node == name && inv.find_switch(there->node))
              out.push_back({name, l.name, there->node, there->port, std::nullopt});
        }
  return out;
}

Reconciliation switch_pfc_reconciliation(const std::vector<HostSwitchPort>& ports,
                                         const std::vector<SwitchDelta>& deltas,
                                         std::optional<int> priority) {
  Reconciliation r;
  const std::string key = priority ? fmt::format("switch_pfc_reconciliation[{}]", *priority)
                                   : std::string("switch_pfc_reconciliation");
  if (ports.empty()) {
    r.measured.absent(key, "the case's hosts' NIC links (inventory nics[].link) end on no switch");
    return r;
  }
  double received = 0, sent = 0;
  for (const auto& hp : ports) {
    const auto d = std::find_if(deltas.begin(), deltas.end(), [&](const SwitchDelta& x) {
      return x.switch_name == hp.switch_name;
    });
    const auto fail = [&](std::string why) {
      r.measured.absent(key, std::move(why));
      return r;
    };
    if (d == deltas.end())
      return fail(fmt::format("switch {} has no snmp settings", hp.switch_name));
    if (!d->answered())
      return fail(fmt::format("switch {} gave no counters: {}", hp.switch_name, d->error));
    if (!d->pfc_served)
      return fail(fmt::format("switch {} does not serve CISCO-PFC-EXT-MIB", hp.switch_name));
    const PortDelta* p = d->find_port(hp.port);
    if (!p)
      return fail(
          fmt::format("switch {} has no port {} (link {})", hp.switch_name, hp.port, hp.link));
    for (std::size_t q = 0; q < p->pfc_rx.size(); ++q)
      if (!priority || static_cast<std::size_t>(*priority) == q)
        received += static_cast<double>(p->pfc_rx[q].value_or(0));
    if (!hp.nic_tx_pause)
      return fail(
          fmt::format("{}'s NIC on link {} has no tx pause counters (ethtool "
                      "tx_prioP_pause)",
                      hp.host, hp.link));
    sent += *hp.nic_tx_pause;
  }
  r.switches = received;
  r.nics = sent;
  if (sent == 0) {
    r.measured.absent(
        key,
        fmt::format("the NICs sent no PFC frame (their switch ports received {:g})", received));
    return r;
  }
  r.measured.values[key] = received / sent;
  return r;
}

Reconciliation switch_mirror_reconciliation(const inventory::Inventory& inv,
                                            const std::vector<MirrorBytes>& mirrors,
                                            const std::vector<SwitchDelta>& deltas) {
  Reconciliation r;
  const std::string key = "switch_mirror_reconciliation";
  if (mirrors.empty()) {
    r.measured.absent(key, "no capture ran beside this test");
    return r;
  }
  double bytes = 0, octets = 0;
  for (const auto& m : mirrors) {
    const inventory::CapturePoint* point = inv.find_capture(m.point);
    if (!point) continue;
    if (!m.bytes) {
      r.measured.absent(key, fmt::format("capture {} kept only some frames (its filter); the "
                                         "switch counts every frame: use capture filter: all",
                                         m.point));
      return r;
    }
    bytes += *m.bytes;
    const std::string& sw = point->mirrors.switch_name;
    const auto d = std::find_if(deltas.begin(), deltas.end(),
                                [&](const SwitchDelta& x) { return x.switch_name == sw; });
    if (d == deltas.end() || !d->answered()) {
      r.measured.absent(key,
                        fmt::format("switch {} (mirrored by {}) gave no counters{}", sw, m.point,
                                    d == deltas.end() ? " (no snmp settings, or not in the case)"
                                                      : ": " + d->error));
      return r;
    }
    std::vector<std::string> ports = point->mirrors.ports;
    for (const auto& name : point->mirrors.links)
      for (const auto& l : inv.links)
        if (l.name == name)
          for (const auto* end : {&l.a, &l.b})
            if (end->node == sw) ports.push_back(end->port);
    const std::string& dir = point->mirrors.direction;
    const bool spine = is_spine(inv.find_switch(sw));
    // Which of the switch's directions the mirror copies: out of the switch, into it, or both.
    const bool out = dir == "egress" || dir == "both" || dir.empty() ||
                     (dir == "spine-to-leaf" && spine) || (dir == "leaf-to-spine" && !spine);
    const bool in = dir == "ingress" || dir == "both" || dir.empty() ||
                    (dir == "leaf-to-spine" && spine) || (dir == "spine-to-leaf" && !spine);
    for (const auto& port : ports) {
      const PortDelta* p = d->find_port(port);
      if (!p || (out && !p->out_octets) || (in && !p->in_octets)) {
        r.measured.absent(key,
                          fmt::format("switch {} has no octet counters for port {}", sw, port));
        return r;
      }
      octets += static_cast<double>((out ? *p->out_octets : 0) + (in ? *p->in_octets : 0));
    }
  }
  r.mirror = bytes;
  r.switches = octets;
  if (octets == 0) {
    r.measured.absent(key, fmt::format("the mirrored ports carried nothing (the mirrors saw {:g} "
                                       "bytes)",
                                       bytes));
    return r;
  }
  r.measured.values[key] = bytes / octets;
  return r;
}

}  // namespace rocehil::run
