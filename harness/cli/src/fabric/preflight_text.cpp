#include "fabric/preflight_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rocehil/preflight/preflight.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

const preflight::CheckItem* first_item(const preflight::HostCheck& h, std::string_view prefix) {
  for (const auto& i : h.items)
    if (i.name == prefix || i.name.starts_with(std::string(prefix) + " ")) return &i;
  return nullptr;
}

// Adds `value` to a cell of distinct values, in first-seen order.
void add_distinct(std::vector<std::string>& values, std::string value) {
  if (!value.empty() && std::find(values.begin(), values.end(), value) == values.end())
    values.push_back(std::move(value));
}

std::string joined(const std::vector<std::string>& values, std::string_view separator,
                   std::string_view none) {
  if (values.empty()) return std::string(none);
  std::string out;
  for (const auto& v : values) {
    if (!out.empty()) out += separator;
    out += v;
  }
  return out;
}

// Compact cells: the table is a glance, the lines under it say why.
std::string agent_cell(const preflight::HostCheck& h) {
  const preflight::CheckItem* i = first_item(h, "agent");
  if (!i) return "-";
  if (i->status == preflight::CheckStatus::ok) return "ok";
  if (!h.facts || h.facts->agent_version.empty()) return "missing";
  std::string_view v = h.facts->agent_version;
  if (v.starts_with("rocehil ")) v.remove_prefix(8);
  return std::string(v.substr(0, 20));
}

std::string rdma_cell(const preflight::HostCheck& h) {
  std::size_t ports = 0, active = 0;
  for (const auto& i : h.items)
    if (i.name.starts_with("rdma ")) {
      ++ports;
      if (i.status == preflight::CheckStatus::ok) ++active;
    }
  return ports == 0 ? "-" : fmt::format("{}/{} active", active, ports);
}

// The MTU of every netdev the inventory's NICs use, as the host has it.
std::string mtu_cell(const preflight::HostCheck& h) {
  if (!h.facts) return "-";
  std::vector<std::string> values;
  for (const auto& i : h.items) {
    if (!i.name.starts_with("mtu ")) continue;
    const std::string_view netdev = std::string_view(i.name).substr(4);
    for (const auto& n : h.facts->netdevs)
      if (n.name == netdev && n.mtu > 0) add_distinct(values, std::to_string(n.mtu));
  }
  return joined(values, ",", "-");
}

std::string pfc_cell(const preflight::HostCheck& h) {
  if (!h.facts) return "-";
  std::vector<std::string> values;
  for (const auto& n : h.facts->netdevs) {
    if (!n.pfc) continue;
    std::string prios;
    for (std::size_t p = 0; p < 8; ++p)
      if ((*n.pfc)[p]) {
        if (!prios.empty()) prios += ',';
        prios += std::to_string(p);
      }
    add_distinct(values, prios.empty() ? "none" : prios);
  }
  return joined(values, "/", "?");
}

std::string ecn_cell(const preflight::HostCheck& h) {
  if (!h.facts) return "-";
  bool known = false, np = false, rp = false;
  for (const auto& n : h.facts->netdevs) {
    for (const auto& [side, on] : {std::pair{&n.ecn_np, &np}, std::pair{&n.ecn_rp, &rp}}) {
      if (!*side) continue;
      known = true;
      for (const bool b : **side) *on = *on || b;
    }
  }
  if (!known) return "?";
  if (np && rp) return "np+rp";
  return np ? "np" : rp ? "rp" : "off";
}

std::string firmware_cell(const preflight::HostCheck& h) {
  if (!h.facts) return "-";
  std::vector<std::string> values;
  for (const auto& d : h.facts->rdma) {
    std::string fw = d.fw_ver;
    for (const auto& n : h.facts->netdevs)
      if (n.name == d.netdev && !n.firmware.empty())
        fw = n.firmware.substr(0, n.firmware.find(' '));
    add_distinct(values, fw);
  }
  return joined(values, ",", "-");
}

}  // namespace

std::string render_check_text(const preflight::CheckReport& r) {
  TextTable table({{"HOST", TextTable::Align::left},
                   {"ADDRESS", TextTable::Align::left},
                   {"VERDICT", TextTable::Align::left},
                   {"SSH", TextTable::Align::right},
                   {"AGENT", TextTable::Align::left},
                   {"RDMA", TextTable::Align::left},
                   {"MTU", TextTable::Align::right},
                   {"PFC", TextTable::Align::left},
                   {"ECN", TextTable::Align::left},
                   {"FIRMWARE", TextTable::Align::left}});
  std::size_t counts[4] = {0, 0, 0, 0};
  std::string details;
  for (const auto& h : r.hosts) {
    ++counts[static_cast<int>(h.verdict)];
    if (h.verdict == preflight::HostVerdict::unreachable) {
      table.add_row({h.host, h.address, "unreachable", "-", "-", "-", "-", "-", "-", "-"});
      details += fmt::format("  {}: unreachable: {}\n", h.host, h.unreachable);
      continue;
    }
    table.add_row({h.host, h.address, std::string(to_string(h.verdict)),
                   fmt::format("{:.0f} ms", h.ssh_ms), agent_cell(h), rdma_cell(h), mtu_cell(h),
                   pfc_cell(h), ecn_cell(h), firmware_cell(h)});
    for (const auto& i : h.items)
      if (i.status == preflight::CheckStatus::fail || i.status == preflight::CheckStatus::warn)
        details += fmt::format("  {}: {} {}: {}\n", h.host, to_string(i.status), i.name, i.detail);
      else if (i.name == "deploy")  // what --deploy did there, whatever it was
        details += fmt::format("  {}: deploy: {}\n", h.host, i.detail);
  }
  std::string out = table.render();
  // What the short cells mean, once, under a table that shows them.
  bool unknown = false;
  for (const auto& h : r.hosts)
    unknown = unknown || (h.facts && (pfc_cell(h) == "?" || ecn_cell(h) == "?"));
  out +=
      "PFC: the priorities with PFC on (from mlnx_qos, else dcb; none: off); ECN: np = the NICs "
      "send CNPs, rp = they slow down on them (sysfs ecn/roce_np, roce_rp)";
  out += unknown ? "; ?: the host's NICs do not say (no mlnx_qos or dcb, no ecn/ in sysfs: "
                   "rocehil cannot read it there, which is not the same as off)\n"
                 : "\n";
  if (!details.empty()) out += "\n" + details;
  out += fmt::format("{} host{}: {} ok, {} soft only, {} failed, {} unreachable\n", r.hosts.size(),
                     r.hosts.size() == 1 ? "" : "s", counts[0], counts[1], counts[2], counts[3]);
  return out;
}

}  // namespace rocehil::cli
