#include "fabric/switches_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "rocehil/switches/port_json.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

std::string count_cell(const std::optional<switches::Count>& c) {
  return c ? std::to_string(c->value) : "-";
}

// "p3 40" for the priorities that have a value, "-" when none is served.
std::string pfc_cell(const std::array<std::optional<switches::Count>, 8>& pfc) {
  std::string out;
  for (std::size_t p = 0; p < 8; ++p)
    if (pfc[p] && pfc[p]->value > 0)
      out += fmt::format("{}p{} {}", out.empty() ? "" : " ", p, pfc[p]->value);
  bool served = false;
  for (const auto& c : pfc) served = served || c.has_value();
  return !served ? "-" : out.empty() ? "0" : out;
}

}  // namespace

std::string render_switch_check_text(const preflight::SwitchCheckReport& r) {
  if (!r.skipped.empty()) return fmt::format("switches: not checked: {}\n", r.skipped);
  TextTable table({{"SWITCH", TextTable::Align::left},
                   {"ADDRESS", TextTable::Align::left},
                   {"SNMP", TextTable::Align::left},
                   {"PORTS", TextTable::Align::right},
                   {"PFC MIB", TextTable::Align::left},
                   {"QUEUE MIB", TextTable::Align::left},
                   {"LLDP", TextTable::Align::left}});
  std::string details;
  for (const auto& s : r.switches) {
    if (!s.answered()) {
      table.add_row({s.name, s.address, "no answer", "-", "-", "-", "-"});
      details += fmt::format("  {}: {}\n", s.name, s.error);
      continue;
    }
    table.add_row(
        {s.name, s.address, "ok", std::to_string(s.interfaces), s.pfc_served ? "served" : "absent",
         s.queues_served ? "served" : "absent",
         s.lldp_error.empty() ? fmt::format("{} neighbours", s.lldp_neighbors) : "absent"});
    for (const auto& p : s.unknown_ports) details += "  " + p + "\n";
    if (!s.lldp_error.empty()) details += fmt::format("  {}: lldp: {}\n", s.name, s.lldp_error);
  }
  std::size_t ok = 0, one_end = 0;
  std::set<std::string> silent;
  for (const auto& f : r.cabling) {
    if (f.kind == switches::CablingFinding::Kind::ok)
      ++ok;
    else
      details += fmt::format("  cabling {}: {}\n", switches::to_string(f.kind), f.message);
    if (!f.unread.empty()) ++one_end;
    silent.insert(f.unread.begin(), f.unread.end());
  }
  std::string out = table.render();
  if (!details.empty()) out += "\n" + details;
  // A switch that did not answer verified nothing: what was seen, was seen from the other end.
  if (!r.cabling.empty())
    out += fmt::format("cabling: {} of {} findings as designed (LLDP against links){}\n", ok,
                       r.cabling.size(),
                       one_end == 0 ? std::string()
                                    : fmt::format("; {} seen from one end only: {} did not "
                                                  "answer",
                                                  one_end, fmt::join(silent, ", ")));
  return out;
}

std::string render_snapshots_text(const std::vector<switches::SwitchSnapshot>& snapshots,
                                  bool all_ports) {
  TextTable table({{"SWITCH", TextTable::Align::left},
                   {"PORT", TextTable::Align::left},
                   {"IN OCTETS", TextTable::Align::right},
                   {"OUT OCTETS", TextTable::Align::right},
                   {"IN DISC", TextTable::Align::right},
                   {"OUT DISC", TextTable::Align::right},
                   {"ERRORS", TextTable::Align::right},
                   {"Q DROPS", TextTable::Align::right},
                   {"PFC RX", TextTable::Align::left},
                   {"PFC TX", TextTable::Align::left}});
  std::string problems;
  for (const auto& s : snapshots) {
    if (!s.answered()) {
      problems += fmt::format("  {}: {}\n", s.switch_name, s.error);
      continue;
    }
    for (const auto& p : s.ports) {
      // Without --all, ports that carried nothing (loopback, management, unused) are left out.
      const bool idle =
          (!p.in_octets || p.in_octets->value == 0) && (!p.out_octets || p.out_octets->value == 0);
      if (idle && !all_ports) continue;
      std::string errors = "-";
      if (p.in_errors || p.out_errors)
        errors = std::to_string((p.in_errors ? p.in_errors->value : 0) +
                                (p.out_errors ? p.out_errors->value : 0));
      table.add_row({s.switch_name, p.name.empty() ? p.descr : p.name, count_cell(p.in_octets),
                     count_cell(p.out_octets), count_cell(p.in_discards),
                     count_cell(p.out_discards), errors, count_cell(p.queue_drops),
                     pfc_cell(p.pfc_rx), pfc_cell(p.pfc_tx)});
    }
  }
  std::string out = table.render();
  if (!problems.empty()) out += "\nnot answered:\n" + problems;
  return out + "('-': the switch does not serve that counter)\n";
}

nlohmann::json snapshots_json(const std::vector<switches::SwitchSnapshot>& snapshots) {
  nlohmann::json j{{"schema_version", 1}, {"switches", nlohmann::json::array()}};
  for (const auto& s : snapshots) {
    nlohmann::json e{
        {"name", s.switch_name}, {"answered", s.answered()}, {"poll_seconds", s.poll_seconds}};
    if (!s.answered()) {
      e["error"] = s.error;
      j["switches"].push_back(std::move(e));
      continue;
    }
    e["sys_name"] = s.sys_name;
    if (s.uptime_ticks) e["uptime_ticks"] = *s.uptime_ticks;
    e["pfc_mib"] = s.pfc_served;
    e["queue_mib"] = s.queues_served;
    e["ports"] = nlohmann::json::array();
    for (const auto& p : s.ports) {
      e["ports"].push_back(switches::to_json(p));
    }
    j["switches"].push_back(std::move(e));
  }
  return j;
}

std::string render_lldp_text(const std::vector<switches::LldpView>& views) {
  TextTable table({{"SWITCH", TextTable::Align::left},
                   {"PORT", TextTable::Align::left},
                   {"NEIGHBOUR", TextTable::Align::left},
                   {"ITS PORT", TextTable::Align::left}});
  std::string problems;
  for (const auto& v : views) {
    if (!v.answered()) problems += fmt::format("  {}: {}\n", v.switch_name, v.error);
    for (const auto& n : v.neighbors) {
      const std::string remote = n.remote();
      table.add_row({v.switch_name, n.local_port, n.remote_system.empty() ? "?" : n.remote_system,
                     remote.substr(remote.find(':') + 1)});
    }
  }
  std::string out = table.render();
  if (!problems.empty()) out += "\nnot answered:\n" + problems;
  return out;
}

nlohmann::json lldp_json(const std::vector<switches::LldpView>& views) {
  nlohmann::json j{{"schema_version", 1}, {"switches", nlohmann::json::array()}};
  for (const auto& v : views) {
    nlohmann::json e{{"name", v.switch_name}, {"answered", v.answered()}};
    if (!v.answered()) e["error"] = v.error;
    e["neighbors"] = nlohmann::json::array();
    for (const auto& n : v.neighbors)
      e["neighbors"].push_back({{"port", n.local_port},
                                {"remote_system", n.remote_system},
                                {"remote_port_id", n.remote_port_id},
                                {"remote_port_id_subtype", n.remote_port_id_subtype},
                                {"remote_port_descr", n.remote_port_descr}});
    j["switches"].push_back(std::move(e));
  }
  return j;
}

std::string render_port_admin_text(const switches::PortAdminResult& r) {
  return fmt::format("{} {} is {} (ifIndex {}, ifAdminStatus read back)\n", r.switch_name, r.port,
                     switches::to_string(r.status), r.if_index);
}

nlohmann::json port_admin_json(const switches::PortAdminResult& r) {
  return {{"schema_version", 1},
          {"switch", r.switch_name},
          {"port", r.port},
          {"if_index", r.if_index},
          {"admin_status", std::string(switches::to_string(r.status))},
          {"read_back", true}};
}

}  // namespace rocehil::cli
