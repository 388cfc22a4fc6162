#include "rocehil/traffic/pacing.hpp"

#include <array>

namespace rocehil::traffic {

namespace {
constexpr std::array<std::string_view, 3> method_names{"nic", "engine", "perftest"};
}

std::string_view to_string(PacingMethod method) {
  const auto i = static_cast<std::size_t>(method);
  return i < method_names.size() ? method_names[i] : "?";
}

std::optional<PacingMethod> pacing_method_named(std::string_view name) {
  for (std::size_t i = 0; i < method_names.size(); ++i)
    if (method_names[i] == name) return static_cast<PacingMethod>(i);
  return std::nullopt;
}

}  // namespace rocehil::traffic
