#include "testbed_host_dcqcn.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/catalogue.hpp"

namespace rocehil::cli {

namespace fs = std::filesystem;

std::vector<std::string> write_lossless_host_dcqcn(const testbed::Topology& t,
                                                   const std::string& soft_dir) {
  std::vector<std::string> written;
  for (const testbed::Namespace& ns : t.namespaces) {
    if (ns.role != testbed::Role::host || ns.fabric_address.empty()) continue;
    for (const testbed::Interface& i : ns.interfaces) {
      if (i.address != ns.fabric_address) continue;
      const fs::path nic = fs::path(soft_dir) / ns.fabric_address / "sys/class/net" / i.name;
      for (const HostSettingValue& v : lossless_host_dcqcn) {
        const settings::Setting* s = settings::find(v.name);
        if (s == nullptr || s->sysfs.empty())
          throw Error(ExitCode::infrastructure,
                      fmt::format("{} is not a file setting of the catalogue; this rocehil is "
                                  "inconsistent",
                                  v.name));
        const fs::path file = nic / std::string(s->sysfs);
        std::error_code ec;
        fs::create_directories(file.parent_path(), ec);
        std::ofstream out(file, std::ios::trunc);
        out << v.value << '\n';
        if (!out.flush())
          throw system_error(fmt::format("cannot write {} for {}", file.string(), ns.name), errno);
        written.push_back(file.string());
      }
    }
  }
  return written;
}

}  // namespace rocehil::cli
