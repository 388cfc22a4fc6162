#include "rocehil/settings/qos_output.hpp"

#include <array>
#include <sstream>
#include <vector>

namespace rocehil::settings {

namespace {

std::vector<std::string> words_of(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string canonical(const std::array<bool, 8>& on) {
  std::string out;
  for (int p = 0; p < 8; ++p)
    if (on[p]) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "none" : out;
}

template <class Each>
void each_line(std::string_view text, Each each) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (!each(text.substr(0, end))) return;
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

std::optional<std::string> pfc_in_mlnx_qos(std::string_view output) {
  std::optional<std::string> out;
  bool in_pfc = false;
  each_line(output, [&](std::string_view line) {
    const std::vector<std::string> w = words_of(line);
    if (line.starts_with("PFC configuration")) {
      in_pfc = true;
    } else if (in_pfc && !w.empty() && w[0] == "enabled") {
      if (w.size() != 9) return false;
      std::array<bool, 8> on{};
      for (std::size_t i = 0; i < 8; ++i) {
        if (w[i + 1] != "0" && w[i + 1] != "1") return false;
        on[i] = w[i + 1] == "1";
      }
      out = canonical(on);
      return false;
    }
    return true;
  });
  return out;
}

std::optional<std::string> trust_in_mlnx_qos(std::string_view output) {
  std::optional<std::string> out;
  each_line(output, [&](std::string_view line) {
    constexpr std::string_view key = "Priority trust state:";
    if (!line.starts_with(key)) return true;
    const std::vector<std::string> w = words_of(line.substr(key.size()));
    if (w.size() == 1 && (w[0] == "dscp" || w[0] == "pcp")) out = w[0];
    return false;
  });
  return out;
}

std::optional<std::string> pfc_in_dcb(std::string_view output) {
  std::optional<std::string> out;
  each_line(output, [&](std::string_view line) {
    const std::vector<std::string> w = words_of(line);
    if (w.empty() || w[0] != "prio-pfc") return true;
    std::array<bool, 8> on{};
    for (std::size_t i = 1; i < w.size(); ++i) {
      const std::size_t colon = w[i].find(':');
      if (colon != 1 || w[i][0] < '0' || w[i][0] > '7') return false;
      on[w[i][0] - '0'] = w[i].substr(2) == "on";
    }
    out = canonical(on);
    return false;
  });
  return out;
}

}  // namespace rocehil::settings
