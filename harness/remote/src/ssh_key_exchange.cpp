#include "rocehil/remote/ssh_key_exchange.hpp"

#include <algorithm>
#include <array>
#include <sstream>
#include <vector>

#include "rocehil/remote/run_command.hpp"

namespace rocehil::remote {

namespace {

std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// The configured list from `ssh -G` output: the value of its `kexalgorithms` line.
std::string configured_key_exchanges(const std::string& ssh_g_output) {
  std::istringstream lines(ssh_g_output);
  std::string line;
  const std::string key = "kexalgorithms ";
  while (std::getline(lines, line))
    if (line.compare(0, key.size(), key) == 0) return line.substr(key.size());
  return {};
}

}  // namespace

std::string cheap_key_exchange_first(std::string_view configured) {
  static constexpr std::array<std::string_view, 3> cheap = {
      "mlkem768x25519-sha256", "curve25519-sha256", "curve25519-sha256@libssh.org"};
  const std::vector<std::string> offered = split_commas(configured);
  if (offered.empty()) return {};
  for (const std::string_view name : cheap)
    if (offered.front() == name) return {};
  std::vector<std::string> reordered;
  for (const std::string_view name : cheap)
    for (const std::string& algorithm : offered)
      if (algorithm == name) reordered.push_back(algorithm);
  if (reordered.empty()) return {};
  for (const std::string& algorithm : offered) {
    bool moved = false;
    for (const std::string_view name : cheap) moved = moved || algorithm == name;
    if (!moved) reordered.push_back(algorithm);
  }
  std::string joined;
  for (const std::string& algorithm : reordered) joined += (joined.empty() ? "" : ",") + algorithm;
  return joined;
}

const std::string& ssh_key_exchange_option() {
  // A name no configuration has a Host block for, so `ssh -G` prints what applies to any host; it
  // resolves nothing and connects nowhere.
  static const std::string option = [] {
    const CommandResult shown = run_command({"ssh", "-G", "rocehil-key-exchange.invalid"},
                                            RunOptions{.timeout = std::chrono::milliseconds(5000)});
    if (!shown.succeeded()) return std::string();
    const std::string reordered = cheap_key_exchange_first(configured_key_exchanges(shown.out));
    return reordered.empty() ? std::string() : "KexAlgorithms=" + reordered;
  }();
  return option;
}

}  // namespace rocehil::remote
