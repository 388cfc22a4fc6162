#include "rocehil/settings/assignment.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"

namespace rocehil::settings {

namespace {

void no_twice(const std::vector<Assignment>& list) {
  for (std::size_t i = 0; i < list.size(); ++i)
    for (std::size_t j = i + 1; j < list.size(); ++j)
      if (list[i].setting == list[j].setting)
        throw input_error(fmt::format("{}: {} is given again (first at {}); give it once",
                                      list[j].origin, list[j].setting->name, list[i].origin));
}

}  // namespace

Assignment assign(std::string_view key, std::string_view value, std::string_view origin) {
  const Setting* s = find(key);
  if (s == nullptr) {
    const std::string_view near = nearest(key);
    throw input_error(
        near.empty()
            ? fmt::format("{}: unknown setting '{}' ('rocehil settings list' shows them)", origin,
                          key)
            : fmt::format("{}: unknown setting '{}' (did you mean '{}'?)", origin, key, near));
  }
  try {
    return Assignment{s, canonical_value(*s, value), std::string(origin)};
  } catch (const Error& e) {
    throw input_error(fmt::format("{}: {}", origin, e.what()));
  }
}

Assignment parse_assignment(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw input_error(
        fmt::format("--set '{}': give KEY=VALUE, e.g. --set roce_rp.rpg_time_reset=300", text));
  return assign(text.substr(0, eq), text.substr(eq + 1), "--set");
}

std::vector<Assignment> merge(std::vector<Assignment> earlier,
                              const std::vector<Assignment>& later) {
  no_twice(earlier);
  no_twice(later);
  for (const Assignment& a : later) {
    const auto same = std::find_if(earlier.begin(), earlier.end(),
                                   [&](const Assignment& e) { return e.setting == a.setting; });
    if (same != earlier.end()) {
      *same = a;
    } else {
      earlier.push_back(a);
    }
  }
  return earlier;
}

}  // namespace rocehil::settings
