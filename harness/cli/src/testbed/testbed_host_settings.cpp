#include "testbed/testbed_host_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "rocehil/agent/soft_nic.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/settings/catalogue.hpp"

namespace rocehil::cli {

namespace {

namespace fs = std::filesystem;

const settings::Setting& setting(std::string_view name) {
  const settings::Setting* s = settings::find(name);
  if (s == nullptr)
    throw Error(
        ExitCode::infrastructure,
        fmt::format("{} is not in the settings catalogue; this rocehil is inconsistent", name));
  return *s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> write_lossless_host_settings(
    const testbed::Topology& t, const std::vector<int>& pfc_priorities,
    const std::string& soft_dir) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const HostSettingValue& v : lossless_host_dcqcn)
    values.emplace_back(std::string(v.name), std::string(v.value));
  const settings::Setting& pfc = setting("pfc");
  values.emplace_back(
      "pfc", settings::canonical_value(
                 pfc, pfc_priorities.empty() ? std::string("none")
                                             : fmt::format("{}", fmt::join(pfc_priorities, ","))));
  values.emplace_back("trust", "dscp");
  for (const testbed::Namespace& ns : t.namespaces) {
    if (ns.role != testbed::Role::host || ns.fabric_address.empty()) continue;
    for (const testbed::Interface& i : ns.interfaces) {
      if (i.address != ns.fabric_address) continue;
      const agent::SoftNic nic((fs::path(soft_dir) / ns.fabric_address).string(), i.name);
      nic.make_files();
      for (const auto& [name, value] : values) nic.write(setting(name), value);
    }
  }
  return values;
}

}  // namespace rocehil::cli
