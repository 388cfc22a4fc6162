// `rocehil settings list`: the catalogue of settings (settings/catalogue.hpp), as a table or JSON.
#include "settings_command.hpp"

#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "rocehil/settings/catalogue.hpp"
#include "text_table.hpp"

namespace rocehil::cli {

namespace {

std::string where_text(const settings::Setting& s) {
  std::string out;
  if (!s.sysfs.empty()) out = fmt::format("sysfs {}", s.sysfs);
  if (!s.debugfs.empty())
    out += fmt::format("{}debugfs cc_params/{}", out.empty() ? "" : "; ", s.debugfs);
  if (!s.tool.empty() && s.sysfs.empty() && s.debugfs.empty()) out = std::string(s.tool);
  return out;
}

int list(bool json) {
  if (json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const settings::Setting& s : settings::catalogue())
      list.push_back({{"name", s.name},
                      {"scope", s.scope == settings::Scope::nic ? "nic" : "fabric_link"},
                      {"values", settings::valid_values(s)},
                      {"default", s.default_.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(s.default_)},
                      {"sysfs", s.sysfs.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(s.sysfs)},
                      {"debugfs", s.debugfs.empty() ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(s.debugfs)},
                      {"tool", s.tool.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(s.tool)},
                      {"soft", s.soft},
                      {"needs_root", s.needs_root},
                      {"what", s.what}});
    fmt::print("{}\n", nlohmann::ordered_json{{"schema_version", 1}, {"settings", list}}.dump(2));
    return 0;
  }
  TextTable table({{"setting", TextTable::Align::left},
                   {"values", TextTable::Align::left},
                   {"default", TextTable::Align::left},
                   {"soft", TextTable::Align::left},
                   {"where", TextTable::Align::left}});
  for (const settings::Setting& s : settings::catalogue())
    table.add_row({std::string(s.name), settings::valid_values(s),
                   s.default_.empty() ? "-" : std::string(s.default_),
                   s.scope == settings::Scope::nic ? (s.soft ? "yes" : "no") : "-", where_text(s)});
  fmt::print("{}", table.render());
  return 0;
}

}  // namespace

void add_settings_command(CLI::App& app, int& exit_code) {
  CLI::App* settings_cmd = app.add_subcommand(
      "settings", "The fabric settings rocehil sets by name (docs/settings.md).");
  settings_cmd->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  CLI::App* list_cmd = settings_cmd->add_subcommand(
      "list", "Every setting: the values it takes, the firmware's default, where it is written");
  list_cmd->add_flag("--json", *json, "Print JSON (schema_version 1)");
  list_cmd->footer(
      "\nNIC settings are written through MLNX_OFED's sysfs (/sys/class/net/DEV/ecn/) or the\n"
      "upstream mlx5_ib driver's debugfs (/sys/kernel/debug/mlx5/PCI/cc_params/), as root; the\n"
      "soft provider takes the same names ('soft' yes). switch.* are the testbed's switches.\n"
      "Example: rocehil settings list --json | jq '.settings[].name'");
  list_cmd->callback([json, &exit_code] { exit_code = list(*json); });
}

}  // namespace rocehil::cli
