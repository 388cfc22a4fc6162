// Mapping a dialed-in agent's hello to the inventory.
#include "rocehil/remote/agent_identity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace rocehil::remote {

namespace {

std::set<std::string> addresses_of(const agent::HelloReply& hello) {
  std::set<std::string> out;
  for (const auto& device : hello.devices)
    out.insert(device.addresses.begin(), device.addresses.end());
  return out;
}

std::size_t shared_addresses(const ExpectedHost& host, const std::set<std::string>& has) {
  return static_cast<std::size_t>(std::count_if(host.addresses.begin(), host.addresses.end(),
                                                [&](const auto& a) { return has.count(a); }));
}

// The hello's name as text for a message: an agent may send anything.
std::string shown(const std::string& name) {
  std::string out;
  for (const char c : name.substr(0, 64))
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return out;
}

}  // namespace

std::variant<std::string, AgentRefusal> identify_agent(const agent::HelloReply& hello,
                                                       const std::vector<ExpectedHost>& expected) {
  const std::set<std::string> has = addresses_of(hello);
  const auto named = std::find_if(expected.begin(), expected.end(),
                                  [&](const ExpectedHost& h) { return h.name == hello.host; });
  if (named != expected.end()) {
    if (has.empty() || named->addresses.empty() || shared_addresses(*named, has) > 0)
      return named->name;
    return AgentRefusal{fmt::format(
        "an agent says it is host '{}' but has none of its NIC addresses ({}); it has {}: "
        "start it with the inventory's name for its host (--as)",
        named->name, fmt::join(named->addresses, ", "), fmt::join(has, ", "))};
  }
  const ExpectedHost* best = nullptr;
  std::size_t best_count = 0;
  std::size_t hosts_with_best = 0;
  for (const ExpectedHost& h : expected) {
    const std::size_t n = shared_addresses(h, has);
    if (n == 0 || n < best_count) continue;
    hosts_with_best = n == best_count ? hosts_with_best + 1 : 1;
    best = &h;
    best_count = n;
  }
  if (best != nullptr && hosts_with_best == 1) return best->name;
  if (best != nullptr)
    return AgentRefusal{
        fmt::format("an agent on host '{}' has NIC addresses of more than one inventory host "
                    "({}); start it with --as naming its host",
                    shown(hello.host), fmt::join(has, ", "))};
  // No NIC address of any host: the host whose management address the agent has.
  std::vector<const ExpectedHost*> managed;
  for (const ExpectedHost& h : expected)
    if (!h.management.empty() && has.count(h.management) > 0) managed.push_back(&h);
  if (managed.size() == 1) return managed.front()->name;
  if (managed.size() > 1)
    return AgentRefusal{
        fmt::format("an agent on host '{}' has the management addresses of more than one "
                    "inventory host ({}, {}); start it with --as naming its host",
                    shown(hello.host), managed[0]->name, managed[1]->name)};
  return AgentRefusal{fmt::format(
      "an agent on host '{}' is not in the inventory: no host is named so and none has its NIC "
      "or management addresses ({})",
      shown(hello.host),
      has.empty() ? std::string("it has none") : fmt::format("{}", fmt::join(has, ", ")))};
}

}  // namespace rocehil::remote
