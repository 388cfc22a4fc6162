#include "rocehil/testbed/fabric_settings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/scripts.hpp"
#include "rocehil/testbed/switch_knobs.hpp"

namespace rocehil::testbed {

namespace {

constexpr int max_mbps = 100'000;  // the catalogue's and --*-mbps' upper bound

nlohmann::json parse_json(std::string_view text, std::string_view tool) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ExitCode::infrastructure,
                fmt::format("{} printed JSON that does not parse: {}", tool, e.what()));
  }
}

// "switch.xoff_kb=300": the form `testbed set` takes, for the fix in a message.
std::string example_assignment(std::string_view setting) {
  const auto knobs = knob_names();
  const bool knob = std::find(knobs.begin(), knobs.end(), setting) != knobs.end();
  return fmt::format("{}={}", setting, knob ? "VALUE" : "N");
}

int whole_number(std::string_view setting, std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw input_error(
        fmt::format("{}={}: '{}' is not a whole number of Mb/s", setting, text, text));
  return value;
}

}  // namespace

std::vector<std::string_view> fabric_setting_names() {
  return {ecn_mark_setting, uplink_setting, host_setting};
}

std::vector<std::string_view> switch_setting_names() {
  std::vector<std::string_view> names = fabric_setting_names();
  for (const auto knob : knob_names()) names.push_back(knob);
  return names;
}

std::string agreed_value(std::string_view setting, std::string_view noun, std::string_view nouns,
                         const std::vector<SettingReading>& readings, const std::string& dir) {
  if (readings.empty())
    throw Error(ExitCode::infrastructure, fmt::format("{}: nothing holds it", setting));
  // Every place of a setting must hold the same value: a sweep step that changed some and not
  // others would grade a fabric nobody asked for. The error names one that differs from most of
  // the others, and one of those others.
  std::map<std::string, std::size_t> count;
  for (const auto& r : readings) ++count[r.value];
  if (count.size() < 2) return readings.front().value;
  std::string common = readings.front().value;
  for (const auto& [value, n] : count)
    if (n > count[common]) common = value;
  const SettingReading* usual = nullptr;
  const SettingReading* odd = nullptr;
  for (const auto& r : readings) {
    if (r.value == common && !usual) usual = &r;
    if (r.value != common && !odd) odd = &r;
  }
  throw Error(ExitCode::infrastructure,
              fmt::format("{} is not the same on every {}: {} has {}, {} has {} (as {} of {} {} "
                          "do); set it again with 'rocehil testbed set {} --dir {}'",
                          setting, noun, odd->where, odd->value, usual->where, usual->value,
                          count[common], readings.size(), nouns, example_assignment(setting), dir));
}

TestbedOptions with_fabric_setting(TestbedOptions options, std::string_view setting, int value) {
  const auto checked = [&](int low, std::string_view zero) {
    if (value < low || value > max_mbps)
      throw input_error(fmt::format("{}={}: out of range; it takes {} to {} (Mb/s){}", setting,
                                    value, low, max_mbps, zero));
    return value;
  };
  if (setting == ecn_mark_setting) {
    if (options.lossless)
      throw input_error(fmt::format(
          "{}: testbed {} has lossless switches, which have no rate rule to set: marking is by "
          "queue depth: set switch.wred_kmin_kb/kmax_kb/pmax_percent",
          setting, options.id));
    if (!options.ecn)
      throw input_error(fmt::format(
          "{}: testbed {} was brought up with --no-ecn and marks nothing; bring it up again "
          "without --no-ecn to set the marking rate",
          setting, options.id));
    options.ecn_mark_mbps = checked(1, "");
  } else if (setting == uplink_setting) {
    options.uplink_mbps = checked(0, ", 0 unshaped");
  } else if (setting == host_setting) {
    options.host_mbps = checked(0, ", 0 unshaped");
  } else {
    throw input_error(fmt::format("'{}' is not a testbed switch setting; the testbed sets {}",
                                  setting, fmt::join(fabric_setting_names(), ", ")));
  }
  return options;
}

TestbedOptions with_switch_settings(
    TestbedOptions options, const std::vector<std::pair<std::string, std::string>>& assignments) {
  const auto rates = fabric_setting_names();
  std::vector<std::pair<std::string, std::string>> knobs;
  for (const auto& [setting, text] : assignments) {
    if (std::find(rates.begin(), rates.end(), setting) != rates.end()) {
      options = with_fabric_setting(options, setting, whole_number(setting, text));
    } else if (is_knob(setting)) {
      if (!options.lossless)
        throw input_error(fmt::format(
            "{}: a knob of the lossless switches, and testbed {} has none; bring it up with "
            "'rocehil testbed up --lossless --dir {}' to set it",
            setting, options.id, options.dir));
      knobs.emplace_back(setting, text);
    } else {
      throw input_error(fmt::format("'{}' is not a testbed switch setting; the testbed sets {}",
                                    setting, fmt::join(switch_setting_names(), ", ")));
    }
  }
  if (!knobs.empty()) options.knobs = with_knobs(options.knobs, knobs);
  return options;
}

std::string switch_setting_text(const TestbedOptions& options, std::string_view setting) {
  if (setting == ecn_mark_setting) return std::to_string(options.ecn_mark_mbps);
  if (setting == uplink_setting) return std::to_string(options.uplink_mbps);
  if (setting == host_setting) return std::to_string(options.host_mbps);
  return knob_text(options.knobs, setting);
}

std::vector<std::pair<std::string, std::string>> switch_settings_write_order(
    const std::map<std::string, std::string>& in_force,
    std::vector<std::pair<std::string, std::string>> wanted) {
  constexpr std::string_view kmin = "switch.wred_kmin_kb";
  constexpr std::string_view kmax = "switch.wred_kmax_kb";
  const auto find = [&](std::string_view name) {
    return std::find_if(wanted.begin(), wanted.end(),
                        [&](const auto& w) { return w.first == name; });
  };
  const auto min_at = find(kmin);
  const auto max_at = find(kmax);
  const auto max_now = in_force.find(std::string(kmax));
  if (min_at == wanted.end() || max_at == wanted.end() || max_now == in_force.end()) return wanted;
  // Compared as numbers; text that is none is left where it is, for with_knob to refuse.
  long long new_min = 0, old_max = 0;
  const auto parse = [](const std::string& text, long long& out) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  };
  if (!parse(min_at->second, new_min) || !parse(max_now->second, old_max)) return wanted;
  const bool max_first = new_min > old_max;
  if (max_first == (max_at < min_at)) return wanted;  // already in that order
  std::iter_swap(min_at, max_at);
  return wanted;
}

std::optional<int> ecn_mark_mbps_of(long long packets_per_second) {
  if (packets_per_second < 1 || packets_per_second > ecn_mark_packets_per_second(max_mbps))
    return std::nullopt;
  // The rule rounds Mb/s to packets of ecn_mark_packet_bytes; one Mb/s is 117 packets/s, so the
  // nearest Mb/s is the only one that can have written this rate.
  const long long bits = packets_per_second * ecn_mark_packet_bytes * 8;
  const auto nearest = static_cast<int>((bits + 500'000) / 1'000'000);
  if (nearest < 1 || nearest > max_mbps ||
      ecn_mark_packets_per_second(nearest) != packets_per_second)
    return std::nullopt;
  return nearest;
}

std::optional<int> tbf_mbps_of(std::uint64_t bytes_per_second) {
  constexpr std::uint64_t bytes_per_mbit = 1'000'000 / 8;
  if (bytes_per_second == 0 || bytes_per_second % bytes_per_mbit != 0 ||
      bytes_per_second / bytes_per_mbit > max_mbps)
    return std::nullopt;
  return static_cast<int>(bytes_per_second / bytes_per_mbit);
}

std::map<std::string, long long> parse_ecn_mark_limits(std::string_view nft_json,
                                                       std::string_view table) {
  const nlohmann::json nft = parse_json(nft_json, "nft");
  std::map<std::string, long long> out;
  if (!nft.is_object() || !nft.contains("nftables") || !nft["nftables"].is_array())
    throw Error(ExitCode::infrastructure,
                "nft printed JSON without an \"nftables\" array; is this nft's -j output?");
  for (const auto& entry : nft["nftables"]) {
    if (!entry.is_object() || !entry.contains("rule")) continue;
    const auto& rule = entry["rule"];
    if (rule.value("family", "") != "ip" || rule.value("table", "") != table) continue;
    const nlohmann::json expressions = rule.value("expr", nlohmann::json::array());
    std::string ifname;
    const nlohmann::json* limit = nullptr;
    for (const auto& e : expressions) {
      if (e.contains("match")) {
        const auto& m = e["match"];
        if (m.contains("left") && m["left"].is_object() && m["left"].contains("meta") &&
            m["left"]["meta"].value("key", "") == "oifname" && m.contains("right") &&
            m["right"].is_string())
          ifname = m["right"].get<std::string>();
      }
      if (e.contains("limit")) limit = &e["limit"];
    }
    if (ifname.empty() || !limit) continue;  // not a marking rule
    // Packets per second is what namespace_nft_ruleset writes; a byte rate or another time unit
    // was written by someone else, and has no Mb/s to report.
    if (limit->value("per", "") != "second" || limit->value("rate_unit", "packets") != "packets")
      throw Error(ExitCode::infrastructure,
                  fmt::format("table {}: the rule for {} limits at '{}', not packets per second "
                              "as rocehil writes it; set switch.ecn_mark_mbps again",
                              table, ifname, limit->dump()));
    out.emplace(ifname, limit->value("rate", 0LL));
  }
  return out;
}

std::map<std::string, std::uint64_t> parse_tbf_rates(std::string_view tc_json) {
  const nlohmann::json tc = parse_json(tc_json, "tc");
  if (!tc.is_array())
    throw Error(ExitCode::infrastructure,
                "tc printed JSON that is not an array of qdiscs; is this tc's -j output?");
  std::map<std::string, std::uint64_t> out;
  for (const auto& q : tc) {
    if (!q.is_object() || q.value("kind", "") != "tbf" || !q.value("root", false)) continue;
    const auto options = q.value("options", nlohmann::json::object());
    out[q.value("dev", "")] = options.value("rate", std::uint64_t{0});
  }
  return out;
}

std::map<std::string, std::string> fabric_settings_in_force(const Topology& t,
                                                            const TestbedOptions& options,
                                                            const FabricReadings& readings) {
  const auto reading = [](const std::map<std::string, std::string>& from, const Namespace& ns,
                          std::string_view tool) -> const std::string& {
    const auto it = from.find(ns.netns);
    if (it == from.end())
      throw Error(ExitCode::infrastructure, fmt::format("no {} output for {}", tool, ns.netns));
    return it->second;
  };
  const std::string table = ecn_table_name(t.id);
  std::map<std::string_view, std::vector<SettingReading>> ports;
  for (const auto& ns : t.namespaces) {
    const auto fabric = fabric_interfaces(ns);
    if (fabric.empty()) continue;
    if (options.ecn && is_switch(ns)) {
      const auto limits = parse_ecn_mark_limits(reading(readings.nft, ns, "nft"), table);
      for (const Interface* i : fabric) {
        const auto limit = limits.find(i->name);
        if (limit == limits.end())
          throw Error(ExitCode::infrastructure,
                      fmt::format("{}: table {} has no ECN marking rule for {}; set {} again",
                                  ns.netns, table, i->name, ecn_mark_setting));
        const auto mbps = ecn_mark_mbps_of(limit->second);
        if (!mbps)
          throw Error(ExitCode::infrastructure,
                      fmt::format("{}: the ECN marking rule for {} limits at {}/second, which no "
                                  "{} value writes; set it again",
                                  ns.netns, i->name, limit->second, ecn_mark_setting));
        ports[ecn_mark_setting].push_back({ns.netns + " " + i->name, std::to_string(*mbps)});
      }
    }
    const auto rates = parse_tbf_rates(reading(readings.tc, ns, "tc"));
    for (const Interface* i : fabric) {
      const auto setting = i->kind == LinkKind::host ? host_setting : uplink_setting;
      const auto rate = rates.find(i->name);
      if (rate == rates.end()) {
        ports[setting].push_back({ns.netns + " " + i->name, "0"});  // no tbf: unshaped
        continue;
      }
      const auto mbps = tbf_mbps_of(rate->second);
      if (!mbps)
        throw Error(ExitCode::infrastructure,
                    fmt::format("{}: the tbf of {} shapes at {} bit/s, which no {} value writes; "
                                "set it again",
                                ns.netns, i->name, rate->second * 8, setting));
      ports[setting].push_back({ns.netns + " " + i->name, std::to_string(*mbps)});
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& [setting, values] : ports)
    out[std::string(setting)] = agreed_value(setting, "port", "ports", values, options.dir);
  return out;
}

std::string ecn_marking_replace_batch(const Namespace& ns, const Topology& t,
                                      const TestbedOptions& options) {
  std::string rules = namespace_nft_ruleset(ns, t, options);
  if (rules.empty()) return {};
  // One `nft -f` is one transaction: the old table goes and the new one comes at once, or
  // nothing changes. `add table` first makes the delete succeed even if the table is missing.
  const std::string table = ecn_table_name(t.id);
  return fmt::format("add table ip {0}\ndelete table ip {0}\n", table) + rules;
}

std::string shaping_replace_batch(const Namespace& ns, LinkKind kind, const TestbedOptions& options,
                                  const std::set<std::string>& shaped) {
  std::string out;
  for (const auto& i : ns.interfaces) {
    if (i.kind != kind) continue;
    // `replace` changes a tbf in place (or adds one); only a port that has one can lose it.
    if (i.mbps > 0)
      out += fmt::format("qdisc replace dev {} root {}\n", i.name, port_qdisc(ns, i, options));
    else if (shaped.contains(i.name))
      out += fmt::format("qdisc del dev {} root\n", i.name);
  }
  return out;
}

}  // namespace rocehil::testbed
