#include <fmt/format.h>

#include <algorithm>

#include "rocehil/run/fabric_actions.hpp"

namespace rocehil::run {

namespace {

const inventory::NamedCommand* find_command(const std::vector<inventory::NamedCommand>& commands,
                                            const std::string& name) {
  const auto it = std::find_if(commands.begin(), commands.end(),
                               [&](const inventory::NamedCommand& c) { return c.name == name; });
  return it == commands.end() ? nullptr : &*it;
}

std::string names_of(const std::vector<inventory::NamedCommand>& commands) {
  std::string out;
  for (const auto& c : commands) out += (out.empty() ? "" : ", ") + c.name;
  return out.empty() ? "none" : out;
}

// A switch at one end of a link that can take it down: a testbed's namespace, one with the
// commands to, or one that lets rocehil SET ifAdminStatus over SNMP.
bool can_take_down(const inventory::Switch* s) {
  return s != nullptr &&
         (!s->netns.empty() || !s->link_down.empty() || (s->snmp && s->snmp->can_write()));
}

}  // namespace

std::string event_problem(const suites::Event& e, const inventory::Inventory& inventory) {
  using A = suites::EventAction;
  switch (e.action) {
    case A::link_down:
    case A::link_up: {
      const auto link = std::find_if(inventory.links.begin(), inventory.links.end(),
                                     [&](const inventory::Link& l) { return l.name == e.link; });
      if (link == inventory.links.end())
        return fmt::format("link '{}' is not in {}'s links", e.link, inventory.file);
      if (!can_take_down(inventory.find_switch(link->a.node)) &&
          !can_take_down(inventory.find_switch(link->b.node)))
        return fmt::format(
            "neither end of link '{}' ({} and {}) is a switch rocehil can take it "
            "down on; give the switch link_down and link_up, or an SNMP write credential "
            "(snmp: write_community_file, or writable: true for version 3), in {} "
            "(docs/inventory.md, \"Commands and link control\")",
            e.link, link->a.node, link->b.node, inventory.file);
      return {};
    }
    case A::nic_down:
    case A::nic_up: {
      const inventory::Host* h = inventory.find_host(e.host);
      if (h == nullptr)
        return fmt::format("host '{}' is not in {}'s hosts", e.host, inventory.file);
      const bool netdev = std::any_of(h->nics.begin(), h->nics.end(),
                                      [](const inventory::Nic& n) { return !n.netdev.empty(); });
      if (!netdev)
        return fmt::format(
            "host '{}' has no NIC with a netdev in {}; name its RoCE netdev "
            "(nics: netdev)",
            e.host, inventory.file);
      return {};
    }
    case A::command: {
      if (!e.host.empty()) {
        const inventory::Host* h = inventory.find_host(e.host);
        if (h == nullptr)
          return fmt::format("host '{}' is not in {}'s hosts", e.host, inventory.file);
        if (find_command(h->commands, e.command) == nullptr)
          return fmt::format(
              "host '{}' has no command '{}' in {} (its commands: {}); add it "
              "under the host's commands:",
              e.host, e.command, inventory.file, names_of(h->commands));
        return {};
      }
      const inventory::Switch* s = inventory.find_switch(e.switch_name);
      if (s == nullptr)
        return fmt::format("switch '{}' is not in {}'s switches", e.switch_name, inventory.file);
      if (find_command(s->commands, e.command) == nullptr)
        return fmt::format(
            "switch '{}' has no command '{}' in {} (its commands: {}); add it "
            "under the switch's commands:",
            e.switch_name, e.command, inventory.file, names_of(s->commands));
      if (s->netns.empty() && s->address.empty())
        return fmt::format("switch '{}' has neither an address to ssh to nor a netns in {}",
                           e.switch_name, inventory.file);
      return {};
    }
    case A::pfc: return {};
  }
  return {};
}

}  // namespace rocehil::run
