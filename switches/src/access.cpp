#include "rocehil/switches/access.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "rocehil/common/error.hpp"

namespace rocehil::switches {

namespace {

std::string expand_home(const std::string& path) {
  if (path.rfind("~/", 0) != 0) return path;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "") + path.substr(1);
}

std::string read_secret(const std::string& switch_name, std::string_view what,
                        const std::string& file, const std::string& env_name,
                        const EnvLookup& env) {
  if (!file.empty()) {
    const std::string path = expand_home(file);
    std::ifstream in(path);
    if (!in)
      throw input_error(
          fmt::format("switch '{}': snmp {}_file {}: cannot read it ({}); create it "
                      "with the {} on its first line, mode 0600",
                      switch_name, what, path, std::strerror(errno), what));
    std::string line;
    std::getline(in, line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty())
      throw input_error(
          fmt::format("switch '{}': snmp {}_file {} is empty; write the {} on its "
                      "first line",
                      switch_name, what, path, what));
    return line;
  }
  const auto value = env(env_name);
  if (!value || value->empty())
    throw input_error(
        fmt::format("switch '{}': snmp {}_env: the environment variable {} is not "
                    "set; export it, or name a file with {}_file",
                    switch_name, what, env_name, what));
  return *value;
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

SnmpCredentials read_credentials(const std::string& switch_name,
                                 const inventory::SnmpSettings& settings, const EnvLookup& env) {
  SnmpCredentials c{settings, {}, {}, {}};
  if (settings.version == inventory::SnmpSettings::Version::v2c) {
    c.community =
        read_secret(switch_name, "community", settings.community_file, settings.community_env, env);
    return c;
  }
  // USM derives keys from passphrases of at least 8 characters (RFC 3414 11.2).
  const auto passphrase = [&](std::string_view what, const std::string& file,
                              const std::string& env_name) {
    std::string key = read_secret(switch_name, what, file, env_name, env);
    if (key.size() < 8)
      throw input_error(
          fmt::format("switch '{}': snmp {} is shorter than 8 characters; USM "
                      "passphrases are at least 8",
                      switch_name, what));
    return key;
  };
  if (!settings.auth.empty())
    c.auth_key = passphrase("auth_key", settings.auth_key_file, settings.auth_key_env);
  if (!settings.priv.empty())
    c.priv_key = passphrase("priv_key", settings.priv_key_file, settings.priv_key_env);
  return c;
}

SnmpCredentials read_write_credentials(const std::string& switch_name,
                                       const inventory::SnmpSettings& settings,
                                       const EnvLookup& env) {
  const bool v2c = settings.version == inventory::SnmpSettings::Version::v2c;
  if (!settings.can_write())
    throw input_error(fmt::format(
        "switch '{}': its snmp settings give no write credential; {}", switch_name,
        v2c ? "add write_community_file: PATH (a file holding a community the agent lets write "
              "ifAdminStatus, mode 0600) or write_community_env: VARIABLE"
            : "add writable: true once the SNMPv3 user may write ifAdminStatus"));
  if (!v2c) return read_credentials(switch_name, settings, env);
  SnmpCredentials c{settings, {}, {}, {}};
  c.community = read_secret(switch_name, "write_community", settings.write_community_file,
                            settings.write_community_env, env);
  return c;
}

}  // namespace rocehil::switches
