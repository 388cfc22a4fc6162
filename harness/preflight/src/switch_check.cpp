#include "rocehil/preflight/switch_check.hpp"

#include <fmt/format.h>

#include <chrono>

#include "rocehil/inventory/yaml_reader.hpp"
#include "rocehil/switches/late_agents.hpp"

namespace rocehil::preflight {

namespace {

// "Ethernet1/1" for "Ethernet1/l" — the nearest name the switch has, for the fix.
std::string nearest_port(const switches::SwitchSnapshot& s, const std::string& wanted) {
  std::string best;
  std::size_t best_distance = 4;  // beyond 3 edits a suggestion is noise
  for (const auto& p : s.ports)
    for (const std::string* name : {&p.name, &p.descr})
      if (!name->empty())
        if (const std::size_t d = inventory::edit_distance(*name, wanted); d < best_distance) {
          best_distance = d;
          best = *name;
        }
  return best;
}

void check_ports(const inventory::Inventory& inv, const switches::SwitchSnapshot& s,
                 SwitchFacts& facts) {
  for (const auto& link : inv.links)
    for (const auto* end : {&link.a, &link.b}) {
      if (end->node != s.switch_name || s.find_port(end->port)) continue;
      const std::string near = nearest_port(s, end->port);
      facts.unknown_ports.push_back(fmt::format(
          "switch '{}': port '{}' (link '{}', inventory line {}) is not among its {} interfaces "
          "(ifName, ifDescr, ifAlias); {}",
          s.switch_name, end->port, link.name, link.where.line, s.ports.size(),
          near.empty() ? "correct the port in links" : fmt::format("did you mean '{}'?", near)));
    }
}

}  // namespace

SwitchCheckReport check_switches(const inventory::Inventory& inv,
                                 const switches::PollerOptions& options,
                                 std::chrono::milliseconds wait_for_silent) {
  const auto start = std::chrono::steady_clock::now();
  SwitchCheckReport report;
  auto targets = switches::targets_of(inv);
  if (targets.empty()) {
    report.skipped = "no switch in the inventory has snmp settings";
    return report;
  }
  switches::Poller poller(std::move(targets), options);
  auto snapshots = poller.counters();
  switches::wait_for_late_agents(
      poller, snapshots, [](const switches::SwitchSnapshot&) { return true; },
      start + wait_for_silent);
  // Read after any late agent answered: its neighbours too.
  const auto views = poller.lldp();
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    const auto& s = snapshots[i];
    SwitchFacts f;
    f.name = s.switch_name;
    f.address = poller.targets()[i].address;
    f.error = s.error;
    if (s.answered()) {
      f.sys_name = s.sys_name;
      f.interfaces = s.ports.size();
      f.pfc_served = s.pfc_served;
      f.queues_served = s.queues_served;
      check_ports(inv, s, f);
    }
    f.lldp_error = views[i].error;
    f.lldp_neighbors = views[i].neighbors.size();
    report.switches.push_back(std::move(f));
  }
  if (!inv.links.empty()) report.cabling = switches::check_cabling(inv, views);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

int check_exit_code(const SwitchCheckReport& report) {
  bool failed = false, unreachable = false;
  for (const auto& s : report.switches) {
    unreachable = unreachable || !s.answered();
    failed = failed || !s.unknown_ports.empty();
  }
  for (const auto& f : report.cabling)
    failed = failed || (f.kind != switches::CablingFinding::Kind::ok &&
                        f.kind != switches::CablingFinding::Kind::unverified);
  return unreachable ? 3 : failed ? 1 : 0;
}

nlohmann::json to_json(const SwitchCheckReport& report) {
  nlohmann::json j{{"seconds", report.seconds}};
  if (!report.skipped.empty()) j["skipped"] = report.skipped;
  j["switches"] = nlohmann::json::array();
  for (const auto& s : report.switches) {
    nlohmann::json e{{"name", s.name}, {"address", s.address}, {"answered", s.answered()}};
    if (!s.answered()) {
      e["error"] = s.error;
    } else {
      e["sys_name"] = s.sys_name;
      e["interfaces"] = s.interfaces;
      e["pfc_mib"] = s.pfc_served;
      e["queue_mib"] = s.queues_served;
      e["unknown_ports"] = s.unknown_ports;
    }
    if (s.lldp_error.empty())
      e["lldp_neighbors"] = s.lldp_neighbors;
    else
      e["lldp_error"] = s.lldp_error;
    j["switches"].push_back(std::move(e));
  }
  j["cabling"] = nlohmann::json::array();
  for (const auto& f : report.cabling) {
    nlohmann::json e{{"status", std::string(switches::to_string(f.kind))}, {"message", f.message}};
    if (!f.link.empty()) e["link"] = f.link;
    if (!f.expected.empty()) e["expected"] = f.expected;
    if (!f.seen.empty()) e["seen"] = f.seen;
    j["cabling"].push_back(std::move(e));
  }
  return j;
}

}  // namespace rocehil::preflight
