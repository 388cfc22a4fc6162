#include "rocehil/reports/settings.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "json_view.hpp"

namespace rocehil::reports {

namespace {

// A fact as text: strings as they are, a list of priorities as "0,3", null as "-".
std::string text_of(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) {
      if (!out.empty()) out += ",";
      out += text_of(e);
    }
    return out.empty() ? "none" : out;
  }
  return v.dump();
}

void put(Settings& s, const std::string& name, const nlohmann::json& v) {
  if (v.is_null() || (v.is_string() && v.get<std::string>().empty())) return;
  s[name] = text_of(v);
}

void host_settings(Settings& s, const std::string& host, const nlohmann::json& facts) {
  put(s, host + " kernel", member(facts, "kernel"));
  put(s, host + " agent", member(facts, "agent_version"));
  for (const auto& d : list(facts, "rdma"))
    put(s, fmt::format("{} {} firmware", host, text_of(member(d, "name"))), member(d, "fw_ver"));
  for (const auto& n : list(facts, "netdevs")) {
    const std::string prefix = fmt::format("{} {} ", host, text_of(member(n, "name")));
    for (const char* key :
         {"mtu", "speed_mbps", "driver", "driver_version", "firmware", "ecn_np", "ecn_rp", "pfc",
          "pfc_source", "trust", "prio_buffer", "buffer_sizes", "buffer_source"})
      put(s, prefix + key, member(n, key));
    // DCQCN, one setting per parameter, named by where it was read: "h1 eth1 dcqcn
    // roce_rp/rpg_time_reset" (sysfs ecn/) or "h1 eth1 dcqcn cc_params/rp_time_reset" (debugfs).
    if (const nlohmann::json& congestion = member(n, "congestion"); congestion.is_object())
      for (const auto& [name, value] : congestion.items()) put(s, prefix + "dcqcn " + name, value);
  }
}

}  // namespace

Settings settings_of(const RunRecord& run) {
  Settings s;
  s["rocehil version"] = run.rocehil_version;
  s["suite file"] = content_hash(run.suite_text);
  s["inventory file"] = content_hash(run.inventory_text);
  for (const auto& h : list(run.preflight, "hosts")) {
    const nlohmann::json& name = member(h, "name");
    if (!name.is_string()) continue;
    host_settings(s, name.get<std::string>(), member(h, "facts"));
  }
  // What the run set, as read back after setting it: "set h1 eth1 roce_rp.rpg_time_reset" ->
  // "55", "set switches switch.ecn_mark_mbps" -> "150". (The preflight's values above were read
  // before the run set these.)
  for (const auto& v : list(run.fabric_settings, "in_force")) {
    const nlohmann::json &host = member(v, "host"), &netdev = member(v, "netdev"),
                         &name = member(v, "name"), &value = member(v, "value");
    if (!host.is_string() || !netdev.is_string() || !name.is_string() || !value.is_string())
      continue;
    const std::string where = host.get<std::string>().empty()
                                  ? std::string("switches")
                                  : host.get<std::string>() + " " + netdev.get<std::string>();
    // A value changed under the run did not hold for all of it: compare and trend must not
    // take the run as measured under it.
    const nlohmann::json& found = member(v, "found");
    s["set " + where + " " + name.get<std::string>()] =
        member(v, "held") == false && found.is_string()
            ? value.get<std::string>() + " (read " + found.get<std::string>() +
                  " later: changed under the run)"
            : value.get<std::string>();
  }
  return s;
}

std::string content_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

std::vector<SettingChange> settings_diff(const Settings& before, const Settings& after) {
  std::vector<SettingChange> out;
  auto b = before.begin();
  auto a = after.begin();
  while (b != before.end() || a != after.end()) {
    if (a == after.end() || (b != before.end() && b->first < a->first)) {
      out.push_back({b->first, b->second, std::nullopt});
      ++b;
    } else if (b == before.end() || a->first < b->first) {
      out.push_back({a->first, std::nullopt, a->second});
      ++a;
    } else {
      if (b->second != a->second) out.push_back({b->first, b->second, a->second});
      ++b;
      ++a;
    }
  }
  return out;
}

}  // namespace rocehil::reports
