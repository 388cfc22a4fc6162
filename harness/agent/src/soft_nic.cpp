#include "soft_nic.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/soft_settings.hpp"

namespace rocehil::agent {

namespace {

bool soft_takes(const settings::Setting& s) {
  for (const traffic::SoftSetting& d : traffic::soft_setting_defaults())
    if (d.name == s.name) return true;
  return false;
}

}  // namespace

bool SoftNic::has(const settings::Setting& s, std::string* why_not) const {
  if (soft_takes(s)) return files_.has(s, why_not);
  if (why_not != nullptr) {
    std::vector<std::string> names;
    for (const traffic::SoftSetting& d : traffic::soft_setting_defaults()) names.push_back(d.name);
    *why_not = fmt::format(
        "the soft provider does not take {}; it takes only its DCQCN and CNP settings ({})", s.name,
        fmt::join(names, ", "));
  }
  return false;
}

std::optional<std::string> SoftNic::read(const settings::Setting& s) const {
  return soft_takes(s) ? files_.read(s) : std::nullopt;
}

void SoftNic::write(const settings::Setting& s, const std::string& canonical) const {
  if (!soft_takes(s)) throw input_error(fmt::format("the soft provider does not take {}", s.name));
  files_.write(s, canonical);
}

std::string SoftNic::where(const settings::Setting& s) const {
  return soft_takes(s) ? files_.where(s) : std::string();
}

}  // namespace rocehil::agent
