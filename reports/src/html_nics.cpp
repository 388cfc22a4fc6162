#include "html_nics.hpp"

#include <fmt/format.h>

#include "json_view.hpp"
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
            first ? host : "", first ? nic : "", xml_escape(counter), delta.dump());
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
  if (!notes.empty()) out += "<ul>\n" + notes + "</ul>\n";
  return out + "</details>\n";
}

}  // namespace rocehil::reports
