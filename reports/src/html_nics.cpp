#include "html_nics.hpp"

#include <fmt/format.h>

#include "json_view.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"

namespace rocehil::reports {

namespace {

std::string nic_label(const nlohmann::json& n) {
  const std::string device = text(n, "device");
  const std::string netdev = text(n, "netdev");
  if (device.empty()) return netdev.empty() ? "-" : netdev;
  const auto port = number(n, "port");
  return fmt::format("{} port {}{}", device, port ? static_cast<int>(*port) : 1,
                     netdev.empty() ? "" : " (" + netdev + ")");
}

}  // namespace

// "CNPs: the mirror ports saw 98, the NICs counted 100 on the mirrored paths: 0.98", or why not.
std::string reconciliation_line(const char* what, const nlohmann::json& r) {
  if (!r.is_object()) return "";
  const auto side = [&](const char* key) { return number(r, key); };
  if (const auto value = side("value"))
    return fmt::format(
        "<li>{}: the mirror ports saw {}, the NICs counted {} on the mirrored "
        "paths: {}</li>\n",
        what, format_number(side("mirror").value_or(0)), format_number(side("nics").value_or(0)),
        format_number(*value));
  return fmt::format("<li>{}: not reconciled: {}</li>\n", what, xml_escape(text(r, "unmeasured")));
}

std::string nic_counters_table(const nlohmann::json& attempt) {
  const nlohmann::json& nics = list(member(attempt, "raw"), "nics");
  if (nics.empty()) return "";
  std::string rows, notes;
  for (const auto& n : nics) {
    const std::string host = xml_escape(text(n, "host"));
    const std::string nic = xml_escape(nic_label(n));
    const nlohmann::json& deltas = member(n, "deltas");
    if (deltas.is_object()) {
      bool first = true;
      for (const auto& [counter, delta] : deltas.items()) {
        if (!delta.is_number() || delta.get<double>() == 0) continue;
        rows += fmt::format(
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td>"
            "<td class=\"num\">{}</td></tr>\n",
            first ? host : "", first ? nic : "", xml_escape(counter),
            format_number(delta.get<double>()));
        first = false;
      }
    }
    for (const auto& r : list(n, "reset"))
      if (r.is_string())
        notes += fmt::format("<li>{} {}: <code>{}</code> went backwards (reset): no delta</li>\n",
                             host, nic, xml_escape(r.get<std::string>()));
    for (const auto& p : list(n, "problems"))
      if (p.is_string())
        notes += fmt::format("<li>{} {}: {}</li>\n", host, nic, xml_escape(p.get<std::string>()));
  }
  std::string out = "<details class=\"nics\"><summary>NIC counters during the case</summary>\n";
  if (rows.empty())
    out += "<p>no NIC counter changed</p>\n";
  else
    out += "<table>\n<tr><th>host</th><th>NIC</th><th>counter</th><th>delta</th></tr>\n" + rows +
           "</table>\n";
  const nlohmann::json& reconciled = member(member(attempt, "raw"), "reconciliation");
  notes += reconciliation_line("CNPs", member(reconciled, "cnp"));
  notes += reconciliation_line("PFC frames", member(reconciled, "pfc"));
  if (!notes.empty()) out += "<ul>\n" + notes + "</ul>\n";
  return out + "</details>\n";
}

}  // namespace rocehil::reports
