#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::reports {

// What a run ran with, flattened to named values, so that two runs' differences can be listed
// before their numbers are: "h1 eth1 pfc" -> "3", "h1 mlx5_0 firmware" -> "28.39.1002". Taken from
// the preflight snapshot (firmware, drivers, ECN/DCQCN and PFC per priority, MTU, speed, kernel,
// agent version) plus the versions and the hashes of the suite and inventory files.
using Settings = std::map<std::string, std::string, std::less<>>;

Settings settings_of(const RunRecord& run);

// FNV-1a, 64 bits, as 16 hex digits: tells two files apart, nothing cryptographic.
std::string content_hash(std::string_view text);

struct SettingChange {
  std::string name;
  std::optional<std::string> before, after;  // empty: the other run does not have it
};
// The settings whose values differ, in name order.
std::vector<SettingChange> settings_diff(const Settings& before, const Settings& after);

}  // namespace rocehil::reports
