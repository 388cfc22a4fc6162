#include "rocehil/testbed/switch_knobs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed {

namespace {

int parse_int(std::string_view text, std::string_view field, std::string_view form) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end || text.empty())
    throw input_error(fmt::format("{}: '{}' is not a number; write {}", field, text, form));
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  return parts;
}

void check(std::string_view setting, int value, int low, int high) {
  if (value < low || value > high)
    throw input_error(
        fmt::format("{}={} is out of range: give {} to {}", setting, value, low, high));
}

}  // namespace

nlohmann::json knobs_to_json(const SwitchKnobs& k) {
  return {{"ecn_enable", k.ecn_enable},
          {"pfc_priorities", k.pfc_priorities},
          {"wred_kmin_kb", k.wred_kmin_kb},
          {"wred_kmax_kb", k.wred_kmax_kb},
          {"wred_pmax_percent", k.wred_pmax_percent},
          {"xoff_kb", k.xoff_kb},
          {"dscp_to_tc", k.dscp_to_tc},
          {"pfc_watchdog_detection_ms", k.watchdog_detection_ms},
          {"pfc_watchdog_restoration_ms", k.watchdog_restoration_ms}};
}

SwitchKnobs knobs_from_json(const nlohmann::json& j, const std::string& path) {
  SwitchKnobs k;
  try {
    k.ecn_enable = j.at("ecn_enable").get<bool>();
    k.pfc_priorities = j.at("pfc_priorities").get<std::vector<int>>();
    k.wred_kmin_kb = j.at("wred_kmin_kb").get<int>();
    k.wred_kmax_kb = j.at("wred_kmax_kb").get<int>();
    k.wred_pmax_percent = j.at("wred_pmax_percent").get<int>();
    k.xoff_kb = j.at("xoff_kb").get<int>();
    k.dscp_to_tc = j.at("dscp_to_tc").get<std::string>();
    k.watchdog_detection_ms = j.at("pfc_watchdog_detection_ms").get<int>();
    k.watchdog_restoration_ms = j.at("pfc_watchdog_restoration_ms").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw input_error(
        fmt::format("{}: knobs: {}; run 'rocehil testbed down' and 'up' again", path, e.what()));
  }
  try {
    validate_knobs(k);
  } catch (const Error& e) {
    throw input_error(fmt::format("{}: {}", path, e.what()));
  }
  return k;
}

std::vector<std::pair<int, int>> parse_dscp_pairs(std::string_view text, std::string_view field) {
  constexpr std::string_view form = "DSCP:CLASS pairs, e.g. 3:3,4:4,46:5";
  std::vector<std::pair<int, int>> pairs;
  if (text == no_dscp_pairs) return pairs;
  for (const auto part : split(text, ',')) {
    const auto colon = part.find(':');
    if (colon == std::string_view::npos)
      throw input_error(fmt::format("{}: '{}' has no ':'; write {}", field, part, form));
    const int dscp = parse_int(part.substr(0, colon), field, form);
    const int tc = parse_int(part.substr(colon + 1), field, form);
    if (dscp < 0 || dscp > 63 || tc < 0 || tc > 7)
      throw input_error(fmt::format("{}: '{}': DSCP is 0-63 and the class 0-7", field, part));
    // Two classes for one DSCP would leave the map to the order they were written in.
    for (const auto& [seen, _] : pairs)
      if (seen == dscp)
        throw input_error(
            fmt::format("{}: DSCP {} is given twice; give each DSCP one class", field, dscp));
    pairs.emplace_back(dscp, tc);
  }
  return pairs;
}

std::string format_dscp_pairs(std::vector<std::pair<int, int>> pairs) {
  if (pairs.empty()) return std::string(no_dscp_pairs);
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [dscp, tc] : pairs)
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", dscp, tc);
  return out;
}

std::vector<int> parse_priority_list(std::string_view text, std::string_view field) {
  std::vector<int> priorities;
  if (text == no_priorities) return priorities;
  for (const auto part : split(text, ',')) {
    const int p = parse_int(part, field, "priorities 0-7 separated by commas, e.g. 3,4, or none");
    if (p < 0 || p > 7 || std::count(priorities.begin(), priorities.end(), p) != 0)
      throw input_error(
          fmt::format("{}: priority {} is outside 0-7 or given twice; e.g. 3,4", field, p));
    priorities.push_back(p);
  }
  std::sort(priorities.begin(), priorities.end());
  return priorities;
}

std::string format_priority_list(const std::vector<int>& priorities) {
  if (priorities.empty()) return std::string(no_priorities);
  return fmt::format("{}", fmt::join(priorities, ","));
}

std::vector<std::string_view> knob_names() {
  return {"switch.ecn_enable",
          "switch.pfc_priorities",
          "switch.wred_kmin_kb",
          "switch.wred_kmax_kb",
          "switch.wred_pmax_percent",
          "switch.xoff_kb",
          "switch.dscp_to_tc",
          "switch.pfc_watchdog_detection_ms",
          "switch.pfc_watchdog_restoration_ms"};
}

namespace {

int* int_knob(SwitchKnobs& k, std::string_view name) {
  if (name == "switch.wred_kmin_kb") return &k.wred_kmin_kb;
  if (name == "switch.wred_kmax_kb") return &k.wred_kmax_kb;
  if (name == "switch.wred_pmax_percent") return &k.wred_pmax_percent;
  if (name == "switch.xoff_kb") return &k.xoff_kb;
  if (name == "switch.pfc_watchdog_detection_ms") return &k.watchdog_detection_ms;
  if (name == "switch.pfc_watchdog_restoration_ms") return &k.watchdog_restoration_ms;
  return nullptr;
}

}  // namespace

namespace {

// Sets one knob from its text, checking the text but not the knobs together (kmin <= kmax):
// with_knobs checks them once every knob of a command is in.
void set_knob(SwitchKnobs& k, std::string_view name, std::string_view text) {
  if (name == "switch.ecn_enable") {
    if (text != "0" && text != "1")
      throw input_error(fmt::format("{}={}: give 0 (no ECN marks) or 1", name, text));
    k.ecn_enable = text == "1";
  } else if (name == "switch.pfc_priorities") {
    k.pfc_priorities = parse_priority_list(text, name);
  } else if (name == "switch.dscp_to_tc") {
    // Kept in the one form the read-back and a journal compare: sorted, "" for none.
    const auto pairs = parse_dscp_pairs(text, name);
    k.dscp_to_tc = pairs.empty() ? std::string() : format_dscp_pairs(pairs);
  } else if (int* value = int_knob(k, name)) {
    *value = parse_int(text, name, "a whole number");
  } else {
    throw input_error(fmt::format("{} is not a switch knob; the knobs are {}", name,
                                  fmt::join(knob_names(), ", ")));
  }
}

}  // namespace

bool is_knob(std::string_view name) {
  const auto names = knob_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

SwitchKnobs with_knob(SwitchKnobs k, std::string_view name, std::string_view text) {
  set_knob(k, name, text);
  validate_knobs(k);
  return k;
}

SwitchKnobs with_knobs(SwitchKnobs k,
                       const std::vector<std::pair<std::string, std::string>>& assignments) {
  for (const auto& [name, text] : assignments) set_knob(k, name, text);
  validate_knobs(k);
  return k;
}

std::string knob_text(const SwitchKnobs& knobs, std::string_view name) {
  SwitchKnobs k = knobs;
  if (name == "switch.ecn_enable") return k.ecn_enable ? "1" : "0";
  if (name == "switch.pfc_priorities") return format_priority_list(k.pfc_priorities);
  if (name == "switch.dscp_to_tc")
    return format_dscp_pairs(parse_dscp_pairs(k.dscp_to_tc, "switch.dscp_to_tc"));
  if (const int* value = int_knob(k, name)) return std::to_string(*value);
  throw input_error(fmt::format("{} is not a switch knob; the knobs are {}", name,
                                fmt::join(knob_names(), ", ")));
}

void validate_knobs(const SwitchKnobs& k) {
  for (const int p : k.pfc_priorities) check("switch.pfc_priorities", p, 0, 7);
  check("switch.wred_kmin_kb", k.wred_kmin_kb, 1, 1'000'000);
  check("switch.wred_kmax_kb", k.wred_kmax_kb, 1, 1'000'000);
  if (k.wred_kmin_kb > k.wred_kmax_kb)
    throw input_error(
        fmt::format("switch.wred_kmin_kb={} is above switch.wred_kmax_kb={}: give kmin <= kmax",
                    k.wred_kmin_kb, k.wred_kmax_kb));
  check("switch.wred_pmax_percent", k.wred_pmax_percent, 0, 100);
  check("switch.xoff_kb", k.xoff_kb, 10, 1'000'000);
  parse_dscp_pairs(k.dscp_to_tc, "switch.dscp_to_tc");
  check("switch.pfc_watchdog_detection_ms", k.watchdog_detection_ms, 0, 60'000);
  check("switch.pfc_watchdog_restoration_ms", k.watchdog_restoration_ms, 1, 60'000);
}

}  // namespace rocehil::testbed
