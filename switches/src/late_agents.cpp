#include "rocehil/switches/late_agents.hpp"

#include <thread>

#include "rocehil/switches/oid.hpp"

namespace rocehil::switches {

std::vector<std::string> wait_for_late_agents(
    Poller& poller, std::vector<SwitchSnapshot>& snapshots,
    const std::function<bool(const SwitchSnapshot&)>& waits_for,
    std::chrono::steady_clock::time_point give_up) {
  const auto silent = [&] {
    std::vector<std::string> names;
    for (const auto& s : snapshots)
      if (!s.answered() && waits_for(s)) names.push_back(s.switch_name);
    return names;
  };
  for (auto asked = silent(); !asked.empty(); asked = silent()) {
    if (std::chrono::steady_clock::now() >= give_up) return asked;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    std::vector<std::string> woke;
    for (const auto& r : poller.walk({mib::sys_name}, asked))
      if (r.error.empty()) woke.push_back(r.switch_name);
    if (woke.empty()) continue;
    for (const auto& s : poller.counters(woke))
      for (auto& old : snapshots)
        if (old.switch_name == s.switch_name && s.answered()) old = s;
  }
  return {};
}

}  // namespace rocehil::switches
