#include "html_switches.hpp"

#include <fmt/format.h>

#include "json_view.hpp"
#include "rocehil/common/units.hpp"
#include "rocehil/reports/junit.hpp"

namespace rocehil::reports {

namespace {

// A counter cell: its value, or '-' where the switch does not serve it.
std::string cell(const nlohmann::json& port, std::string_view key) {
  const auto v = number(port, key);
  return v ? format_number(*v) : "-";
}

double sum_of(const nlohmann::json& port, std::initializer_list<std::string_view> keys) {
  double total = 0;
  for (const auto key : keys) total += number(port, key).value_or(0);
  return total;
}

// "p3 40, p4 2" for the priorities with frames; '-' when the MIB is not served.
std::string pfc_cell(const nlohmann::json& port, std::string_view key, bool served) {
  if (!served) return "-";
  std::string out;
  const nlohmann::json& prios = list(port, key);
  for (std::size_t p = 0; p < prios.size() && p < 8; ++p)
    if (prios[p].is_number() && prios[p].get<double>() > 0)
      out += fmt::format("{}p{} {}", out.empty() ? "" : ", ", p,
                         format_number(prios[p].get<double>()));
  return out.empty() ? "0" : out;
}

std::string reconciliation_item(const char* what, const char* first, const char* first_key,
                                const char* second, const char* second_key,
                                const nlohmann::json& r) {
  if (!r.is_object()) return "";
  if (const auto value = number(r, "value"))
    return fmt::format("<li>{}: {} {}, {} {}: {}</li>\n", what, first,
                       format_number(number(r, first_key).value_or(0)), second,
                       format_number(number(r, second_key).value_or(0)), format_number(*value));
  return fmt::format("<li>{}: not reconciled: {}</li>\n", what, xml_escape(text(r, "unmeasured")));
}

}  // namespace

std::string switch_ports_table(const nlohmann::json& attempt) {
  const nlohmann::json& raw = member(attempt, "raw");
  const nlohmann::json& switches = list(raw, "switches");
  if (switches.empty()) return "";
  std::string rows, notes;
  std::size_t quiet = 0;
  for (const auto& s : switches) {
    const std::string name = xml_escape(text(s, "switch"));
    if (member(s, "answered") != true) {
      notes += fmt::format("<li>{}: no counters: {}</li>\n", name, xml_escape(text(s, "error")));
      continue;
    }
    const bool pfc = member(s, "pfc_mib") == true;
    for (const auto& p : list(s, "ports")) {
      const double drops = sum_of(p, {"in_discards", "out_discards", "queue_drops"});
      const double errors = sum_of(p, {"in_errors", "out_errors"});
      const std::string rx = pfc_cell(p, "pfc_rx", pfc), tx = pfc_cell(p, "pfc_tx", pfc);
      for (const auto& n : list(p, "notes"))
        if (n.is_string())
          notes += fmt::format("<li>{}:{}: {}</li>\n", name, xml_escape(text(p, "port")),
                               xml_escape(n.get<std::string>()));
      // Only the ports a person must look at: the rest carried traffic and nothing else.
      if (drops == 0 && errors == 0 && (rx == "0" || rx == "-") && (tx == "0" || tx == "-")) {
        ++quiet;
        continue;
      }
      rows += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
          name, xml_escape(text(p, "port")), cell(p, "in_octets"), cell(p, "out_octets"),
          cell(p, "in_discards"), cell(p, "out_discards"), cell(p, "queue_drops"),
          errors > 0 ? format_number(errors) : "0", rx, tx);
    }
  }
  std::string out =
      "<details class=\"switches\" open><summary>Switch ports that dropped, errored or paused "
      "(SNMP)</summary>\n";
  if (rows.empty())
    out += fmt::format(
        "<p>no port of the case's switches dropped, errored or paused ({} ports "
        "carried its traffic)</p>\n",
        quiet);
  else
    out +=
        "<table>\n<tr><th>switch</th><th>port</th><th>in octets</th><th>out octets</th>"
        "<th>in discards</th><th>out discards</th><th>queue drops</th><th>errors</th>"
        "<th>PFC received</th><th>PFC sent</th></tr>\n" +
        rows + "</table>\n";
  const nlohmann::json& reconciled = member(raw, "reconciliation");
  notes +=
      reconciliation_item("PFC at the host-facing switch ports", "the switch ports received",
                          "switches", "the NICs sent", "nics", member(reconciled, "switch_pfc"));
  notes += reconciliation_item("Mirrored spine ports", "the mirror ports saw (bytes)", "mirror",
                               "the switches counted (octets)", "switches",
                               member(reconciled, "switch_mirror"));
  if (!notes.empty()) out += "<ul>\n" + notes + "</ul>\n";
  return out + "</details>\n";
}

}  // namespace rocehil::reports
