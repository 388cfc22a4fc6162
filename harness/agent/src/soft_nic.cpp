#include "rocehil/agent/soft_nic.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/soft_settings.hpp"

namespace rocehil::agent {

namespace {

namespace fs = std::filesystem;

bool is_qos(const settings::Setting& s) {
  return s.name == "pfc" || s.name == "trust";
}

bool soft_takes(const settings::Setting& s) {
  if (is_qos(s)) return true;
  for (const traffic::SoftSetting& d : traffic::soft_setting_defaults())
    if (d.name == s.name) return true;
  return false;
}

std::string_view qos_default(const settings::Setting& s) {
  return s.name == "pfc" ? soft_pfc_default : soft_trust_default;
}

}  // namespace

std::uint8_t priority_mask(std::string_view canonical) {
  std::uint8_t mask = 0;
  if (canonical == "none") return mask;
  for (const char c : canonical)
    if (c >= '0' && c <= '7') mask |= static_cast<std::uint8_t>(1u << (c - '0'));
  return mask;
}

std::string SoftNic::qos_file(std::string_view name) const {
  return (fs::path(root_) / "sys/class/net" / files_.netdev() / "rocehil_qos" / std::string(name))
      .string();
}

bool SoftNic::has(const settings::Setting& s, std::string* why_not) const {
  if (is_qos(s)) return true;
  if (soft_takes(s)) return files_.has(s, why_not);
  if (why_not != nullptr) {
    std::vector<std::string> names;
    for (const traffic::SoftSetting& d : traffic::soft_setting_defaults()) names.push_back(d.name);
    *why_not = fmt::format(
        "the soft provider does not take {}; it takes its DCQCN and CNP settings ({}), pfc and "
        "trust",
        s.name, fmt::join(names, ", "));
  }
  return false;
}

std::optional<std::string> SoftNic::read(const settings::Setting& s) const {
  if (!soft_takes(s)) return std::nullopt;
  if (!is_qos(s)) return files_.read(s);
  const std::string path = qos_file(s.name);
  std::ifstream in(path);
  if (!in) return std::string(qos_default(s));
  std::string text;
  std::getline(in, text);
  try {
    return settings::canonical_value(s, text);
  } catch (const Error& e) {
    throw Error(ExitCode::infrastructure,
                fmt::format("the soft provider's {} holds '{}': {}", path, text, e.what()));
  }
}

void SoftNic::write(const settings::Setting& s, const std::string& canonical) const {
  if (!soft_takes(s)) throw input_error(fmt::format("the soft provider does not take {}", s.name));
  if (!is_qos(s)) return files_.write(s, canonical);
  const std::string path = qos_file(s.name);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::trunc);
  out << canonical << '\n';
  if (!out.flush()) throw system_error(fmt::format("cannot write {}", path), errno);
}

std::string SoftNic::where(const settings::Setting& s) const {
  if (is_qos(s)) return qos_file(s.name);
  return soft_takes(s) ? files_.where(s) : std::string();
}

void SoftNic::make_files() const {
  for (const traffic::SoftSetting& d : traffic::soft_setting_defaults()) {
    const settings::Setting* s = settings::find(d.name);
    if (s == nullptr || s->sysfs.empty())
      throw Error(ExitCode::infrastructure,
                  fmt::format("soft provider setting {} is not in the settings catalogue; "
                              "this rocehil is inconsistent",
                              d.name));
    const fs::path file = fs::path(root_) / "sys/class/net" / netdev() / std::string(s->sysfs);
    // A list of priorities is a folder of one 0/1 file per priority, as ConnectX's ecn/*/enable.
    const bool folder = traffic::soft_setting_is_priorities(d.name);
    if (fs::exists(folder ? file / "0" : file)) continue;
    std::error_code ec;
    fs::create_directories(folder ? file : file.parent_path(), ec);
    for (int p = 0; p < (folder ? 8 : 1); ++p) {
      const fs::path at = folder ? file / std::to_string(p) : file;
      std::ofstream out(at);
      if (folder)
        out << (d.value >> p & 1) << '\n';
      else
        out << d.value << '\n';
      if (!out.flush())
        throw system_error(fmt::format("cannot write the soft provider's {}", at.string()), errno);
    }
  }
}

SoftQos SoftNic::qos() const {
  SoftQos q;
  q.trust_pcp = read(*settings::find("trust")) == "pcp";
  q.pfc_priorities = priority_mask(read(*settings::find("pfc")).value_or("none"));
  return q;
}

}  // namespace rocehil::agent
