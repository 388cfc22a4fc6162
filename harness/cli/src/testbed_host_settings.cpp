#include "testbed_host_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

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

// A DCQCN file the agent would otherwise create with the provider's default.
void write_file_setting(const fs::path& nic, const settings::Setting& s, std::string_view value) {
  const fs::path file = nic / std::string(s.sysfs);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::trunc);
  out << value << '\n';
  if (!out.flush()) throw system_error(fmt::format("cannot write {}", file.string()), errno);
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
      const fs::path root = fs::path(soft_dir) / ns.fabric_address;
      const agent::SoftNic nic(root.string(), i.name);
      for (const auto& [name, value] : values) {
        const settings::Setting& s = setting(name);
        if (s.sysfs.empty())
          nic.write(s, value);  // the soft provider's own QoS files
        else
          write_file_setting(root / "sys/class/net" / i.name, s, value);
      }
    }
  }
  return values;
}

}  // namespace rocehil::cli
