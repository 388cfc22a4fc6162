// A switch's SNMP access (`snmp:` in defaults or in a switch entry): the version, the user and
// protocols, and where each secret is read from, never the secret itself.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"

namespace rocehil::inventory::detail {

namespace {

bool is_env_name(std::string_view s) {
  if (s.empty() || s.size() > 64 || std::isdigit(static_cast<unsigned char>(s.front())))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// One secret: `<stem>_file` or `<stem>_env`, exactly one of them when `required`.
void read_secret_source(LoadContext& ctx, const MapReader& m, const std::string& owner,
                        std::string_view stem, bool required, std::string& file, std::string& env) {
  const std::string file_key = fmt::format("{}_file", stem), env_key = fmt::format("{}_env", stem);
  const YAML::Node f = m.get(file_key), e = m.get(env_key);
  if (f.IsDefined() && e.IsDefined()) {
    ctx.error(e, fmt::format("{}: give {} or {}, not both", owner, file_key, env_key));
    return;
  }
  if (!f.IsDefined() && !e.IsDefined()) {
    if (required)
      ctx.error(m.node(), fmt::format("{}: the {} is missing; add {}: PATH (a file holding it, "
                                      "mode 0600) or {}: VARIABLE",
                                      owner, stem, file_key, env_key));
    return;
  }
  if (f.IsDefined()) {
    if (const auto v = read_string(ctx, f, owner + ": " + file_key)) {
      if (is_valid_local_path(*v))
        file = *v;
      else
        ctx.error(f, fmt::format("{}: {} '{}' is not a usable path; give an absolute path or one "
                                 "starting with ~/",
                                 owner, file_key, shown(*v)));
    }
    return;
  }
  if (const auto v = read_string(ctx, e, owner + ": " + env_key)) {
    if (is_env_name(*v))
      env = *v;
    else
      ctx.error(e, fmt::format("{}: {} '{}' is not an environment variable name; use capitals, "
                               "digits and '_', e.g. ROCEHIL_SNMP_COMMUNITY",
                               owner, env_key, shown(*v)));
  }
}

}  // namespace

std::optional<SnmpSettings> read_snmp(LoadContext& ctx, const YAML::Node& node,
                                      const std::string& owner_name) {
  const std::string owner = owner_name + ": snmp";
  const MapReader m(ctx, node, owner,
                    {"version",
                     "community",
                     "community_file",
                     "community_env",
                     "write_community",
                     "write_community_file",
                     "write_community_env",
                     "writable",
                     "user",
                     "auth",
                     "auth_key",
                     "auth_key_file",
                     "auth_key_env",
                     "priv",
                     "priv_key",
                     "priv_key_file",
                     "priv_key_env",
                     "port",
                     "timeout_ms",
                     "retries",
                     "counter_refresh_ms"});
  if (!m.ok()) return std::nullopt;
  bool ok = true;
  SnmpSettings s;
  s.where = location_of(node);
  // A secret written into the inventory would travel into run.json, reports and logs.
  for (const char* inline_secret : {"community", "write_community", "auth_key", "priv_key"})
    if (const auto n = m.get(inline_secret); n.IsDefined()) {
      ctx.error(n, fmt::format("{}: {} is a secret and is not read from the inventory; put it in "
                               "a file ({}_file: PATH, mode 0600) or an environment variable "
                               "({}_env: VARIABLE)",
                               owner, inline_secret, inline_secret, inline_secret));
      ok = false;
    }
  if (!ok) return std::nullopt;
  const YAML::Node version = m.require("version", "2c");
  if (version.IsDefined()) {
    if (const auto v = read_choice(ctx, version, owner + ": version", {"2c", "3"}))
      s.version = *v == "3" ? SnmpSettings::Version::v3 : SnmpSettings::Version::v2c;
    else
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  const bool v3 = s.version == SnmpSettings::Version::v3;
  const auto only_for = [&](std::initializer_list<const char*> keys,
                            std::string_view version_name) {
    for (const char* key : keys)
      if (const auto n = m.get(key); n.IsDefined()) {
        ctx.error(n, fmt::format("{}: {} is for SNMP version {} only; remove it, or set version: "
                                 "{}",
                                 owner, key, version_name, version_name));
        ok = false;
      }
  };
  if (v3) {
    only_for({"community_file", "community_env", "write_community_file", "write_community_env"},
             "2c");
    if (const auto w = m.get("writable"); w.IsDefined())
      if (const auto v = read_choice(ctx, w, owner + ": writable", {"true", "false"}))
        s.writable = *v == "true";
    if (const auto u = m.require("user", "rocehil"); u.IsDefined()) {
      if (const auto v = read_string(ctx, u, owner + ": user")) {
        if (is_valid_user(*v) && v->size() <= 32)
          s.user = *v;
        else
          ctx.error(u, fmt::format("{}: user '{}' is not a USM user name; use letters, digits, "
                                   "'_', '.' and '-' (at most 32)",
                                   owner, shown(*v)));
      }
    }
    if (const auto a = m.get("auth"); a.IsDefined())
      if (const auto v = read_choice(ctx, a, owner + ": auth",
                                     {"md5", "sha", "sha224", "sha256", "sha384", "sha512"}))
        s.auth = *v;
    if (const auto p = m.get("priv"); p.IsDefined())
      if (const auto v = read_choice(ctx, p, owner + ": priv", {"des", "aes", "aes192", "aes256"}))
        s.priv = *v;
    if (!s.priv.empty() && s.auth.empty() && !m.get("auth").IsDefined()) {
      ctx.error(m.get("priv"), fmt::format("{}: priv needs auth (USM has no privacy without "
                                           "authentication); add auth: sha",
                                           owner));
      ok = false;
    }
    if (!s.auth.empty())
      read_secret_source(ctx, m, owner, "auth_key", true, s.auth_key_file, s.auth_key_env);
    else
      only_for({"auth_key_file", "auth_key_env"}, "3 with auth");
    if (!s.priv.empty())
      read_secret_source(ctx, m, owner, "priv_key", true, s.priv_key_file, s.priv_key_env);
    else
      only_for({"priv_key_file", "priv_key_env"}, "3 with priv");
  } else {
    only_for(
        {"user", "auth", "auth_key_file", "auth_key_env", "priv", "priv_key_file", "priv_key_env"},
        "3");
    read_secret_source(ctx, m, owner, "community", true, s.community_file, s.community_env);
    // SNMPv2c has no write flag: the agent grants writing to a community of its own.
    if (const auto w = m.get("writable"); w.IsDefined()) {
      ctx.error(w, fmt::format("{}: writable is for SNMP version 3 (the user may write); for 2c "
                               "give write_community_file: PATH (or write_community_env) instead",
                               owner));
      ok = false;
    }
    read_secret_source(ctx, m, owner, "write_community", false, s.write_community_file,
                       s.write_community_env);
  }
  if (const auto n = m.get("port"); n.IsDefined()) {
    if (const auto v = read_int(ctx, n, owner + ": port", 1, 65535, "161"))
      s.port = static_cast<int>(*v);
  }
  if (const auto n = m.get("timeout_ms"); n.IsDefined()) {
    if (const auto v = read_int(ctx, n, owner + ": timeout_ms", 10, 60000, "1000"))
      s.timeout_ms = static_cast<int>(*v);
  }
  if (const auto n = m.get("retries"); n.IsDefined()) {
    if (const auto v = read_int(ctx, n, owner + ": retries", 0, 10, "1"))
      s.retries = static_cast<int>(*v);
  }
  if (const auto n = m.get("counter_refresh_ms"); n.IsDefined()) {
    if (const auto v = read_int(ctx, n, owner + ": counter_refresh_ms", 0, 60000, "1000"))
      s.counter_refresh_ms = static_cast<int>(*v);
  }
  if (!ok) return std::nullopt;
  return s;
}

}  // namespace rocehil::inventory::detail
