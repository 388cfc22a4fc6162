#include "load_events.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "rocehil/inventory/names.hpp"

namespace rocehil::suites {

namespace {

using inventory::LoadContext;
using inventory::MapReader;
using inventory::shown;

constexpr std::array<std::pair<EventAction, std::string_view>, 6> action_names{{
    {EventAction::link_down, "link_down"},
    {EventAction::link_up, "link_up"},
    {EventAction::nic_down, "nic_down"},
    {EventAction::nic_up, "nic_up"},
    {EventAction::pfc, "pfc"},
    {EventAction::command, "command"},
}};

std::optional<EventAction> action_named(std::string_view name) {
  for (const auto& [action, text] : action_names)
    if (text == name) return action;
  return std::nullopt;
}

// The value of `key` in the map `n`, found without yaml-cpp's operator[] (which would add the
// key to the document); undefined when absent.
YAML::Node value_of(const YAML::Node& n, std::string_view key) {
  for (auto it = n.begin(); it != n.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

// An inventory name under `key` (required): a link, host, switch or command name.
bool read_name(LoadContext& ctx, const MapReader& m, const std::string& what, std::string_view key,
               const char* example, std::string& out) {
  const YAML::Node v = m.require(key, example);
  if (!v.IsDefined()) return false;
  const auto text = inventory::read_string(ctx, v, fmt::format("{}: {}", what, key));
  if (!text) return false;
  if (!inventory::is_valid_name(*text)) {
    ctx.error(v, fmt::format("{}: {} '{}' is not an inventory name", what, key, shown(*text)));
    return false;
  }
  out = *text;
  return true;
}

// One event; its keys are those of its action and no others.
std::optional<Event> read_event(LoadContext& ctx, const YAML::Node& n, const std::string& owner) {
  if (!n.IsMap()) {
    ctx.error(n, fmt::format("{}: an event is a map such as '{{at_s: 2, action: link_down, "
                             "link: l1-s1}}'",
                             owner));
    return std::nullopt;
  }
  const YAML::Node action_node = value_of(n, "action");
  if (!action_node.IsDefined()) {
    ctx.error(n, fmt::format("{}: event has no 'action'; add one, e.g. 'action: link_down' (one "
                             "of link_down, link_up, nic_down, nic_up, pfc, command)",
                             owner));
    return std::nullopt;
  }
  const auto action_text = inventory::read_string(ctx, action_node, owner + ": event: action");
  if (!action_text) return std::nullopt;
  const auto action = action_named(*action_text);
  if (!action) {
    ctx.error(action_node, fmt::format("{}: event action '{}' is unknown; use one of link_down, "
                                       "link_up, nic_down, nic_up, pfc, command",
                                       owner, shown(*action_text)));
    return std::nullopt;
  }
  Event e;
  e.action = *action;
  e.where = inventory::location_of(n);
  const std::string what = fmt::format("{}: event {}", owner, *action_text);
  // Each action's keys, no more: a key another action takes would be silently ignored.
  const auto reader = [&]() -> MapReader {
    switch (*action) {
      case EventAction::link_down:
      case EventAction::link_up: return MapReader(ctx, n, what, {"at_s", "action", "link"});
      case EventAction::nic_down:
      case EventAction::nic_up: return MapReader(ctx, n, what, {"at_s", "action", "host"});
      case EventAction::pfc:
        return MapReader(
            ctx, n, what,
            {"at_s", "action", "kind", "from", "link", "priority", "quanta", "pps", "duration_s"});
      case EventAction::command: break;
    }
    return MapReader(ctx, n, what, {"at_s", "action", "host", "switch", "command"});
  };
  const MapReader m = reader();
  if (!m.ok()) return std::nullopt;
  bool ok = true;
  if (const YAML::Node at = m.require("at_s", "2"); at.IsDefined()) {
    if (const auto v = inventory::read_number(ctx, at, what + ": at_s", 0, 86400))
      e.at_s = *v;
    else
      ok = false;
  } else {
    ok = false;
  }
  switch (e.action) {
    case EventAction::link_down:
    case EventAction::link_up: ok = read_name(ctx, m, what, "link", "l1-s1", e.link) && ok; break;
    case EventAction::nic_down:
    case EventAction::nic_up: ok = read_name(ctx, m, what, "host", "h3", e.host) && ok; break;
    case EventAction::pfc:
      ok = detail::read_pfc_keys(ctx, m, what, e.pfc) && ok;
      e.pfc.after_s = e.at_s;
      e.pfc.where = e.where;
      break;
    case EventAction::command: {
      const bool on_host = m.has("host"), on_switch = m.has("switch");
      if (on_host == on_switch) {
        ctx.error(n, fmt::format("{}: give one of 'host' and 'switch' (where the inventory's "
                                 "command runs), e.g. 'switch: s1'",
                                 what));
        ok = false;
      } else if (on_host) {
        ok = read_name(ctx, m, what, "host", "h1", e.host) && ok;
      } else {
        ok = read_name(ctx, m, what, "switch", "s1", e.switch_name) && ok;
      }
      ok = read_name(ctx, m, what, "command", "drain", e.command) && ok;
      break;
    }
  }
  if (!ok) return std::nullopt;
  return e;
}

// What an event acts on, for messages and to pair a down with its up: "link l1-s1", "host h3".
std::string target_of(const Event& e) {
  switch (e.action) {
    case EventAction::link_down:
    case EventAction::link_up: return "link " + e.link;
    case EventAction::nic_down:
    case EventAction::nic_up: return "host " + e.host;
    default: return {};
  }
}

}  // namespace

std::string_view to_string(EventAction action) {
  for (const auto& [a, text] : action_names)
    if (a == action) return text;
  return "?";
}

namespace detail {

bool read_pfc_keys(LoadContext& ctx, const MapReader& m, const std::string& what, Injection& in) {
  bool ok = true;
  const auto name = [&](std::string_view key, std::string& out, const char* example) {
    ok = read_name(ctx, m, what, key, example, out) && ok;
  };
  if (const auto k = m.get("kind"); k.IsDefined()) {
    if (const auto v = inventory::read_choice(ctx, k, what + ": kind", {"pfc", "pause"}))
      in.kind = *v;
    else
      ok = false;
  }
  name("from", in.from, "s1");
  name("link", in.link, "l1-s1");
  if (const auto p = m.get("priority"); p.IsDefined()) {
    in.priorities.clear();
    // A scalar or a list of distinct priorities, as a sweep is written.
    const auto one = [&](const YAML::Node& item) {
      const auto v = inventory::read_int(ctx, item, what + ": priority", 0, 7, "3");
      if (!v) return false;
      if (std::find(in.priorities.begin(), in.priorities.end(), *v) != in.priorities.end()) {
        ctx.error(item, fmt::format("{}: priority lists '{}' twice; drop one", what, *v));
        return false;
      }
      in.priorities.push_back(static_cast<int>(*v));
      return true;
    };
    bool all = true;
    if (p.IsSequence()) {
      if (p.size() == 0) {
        ctx.error(p, "an empty list sweeps over nothing; give at least one value");
        all = false;
      }
      for (const auto& item : p) all = one(item) && all;
    } else {
      all = one(p);
    }
    if (!all) {
      in.priorities.clear();
      ok = false;
    }
    if (in.kind == "pause")
      ctx.error(p, fmt::format("{}: 802.3x pause has no priorities; drop priority", what));
  }
  const auto number = [&](std::string_view key, double& out, double lo, double hi) {
    if (const auto v = m.get(key); v.IsDefined()) {
      if (const auto x = inventory::read_number(ctx, v, fmt::format("{}: {}", what, key), lo, hi))
        out = *x;
      else
        ok = false;
    }
  };
  if (const auto q = m.get("quanta"); q.IsDefined()) {
    if (const auto v = inventory::read_int(ctx, q, what + ": quanta", 0, 65535, "65535"))
      in.quanta = static_cast<std::uint32_t>(*v);
    else
      ok = false;
  }
  number("pps", in.pps, 1, 10'000'000);
  number("duration_s", in.duration_s, 0.001, 3600);
  return ok;
}

std::vector<Event> read_events(LoadContext& ctx, const YAML::Node& n, const std::string& owner) {
  std::vector<Event> out;
  if (!n.IsSequence()) {
    ctx.error(n, fmt::format("{}: events must be a list, one '- {{at_s: 2, action: link_down, "
                             "link: l1-s1}}' per event",
                             owner));
    return out;
  }
  for (const auto& item : n)
    if (auto e = read_event(ctx, item, owner)) out.push_back(std::move(*e));
  return out;
}

void check_events(LoadContext& ctx, const SuiteTest& test) {
  const std::string owner = fmt::format("test '{}'", test.name);
  // bw sends for duration_s from the agreed start; every other workload runs its iterations
  // (and a bw its volume, bytes), whose length is not known before it runs.
  const bool by_duration = test.workload == "bw" && test.settings.bytes == 0;
  for (const Event& e : test.events) {
    const std::string what = e.from_inject
                                 ? owner + ": inject"
                                 : fmt::format("{}: event {}", owner, to_string(e.action));
    if (by_duration && e.at_s >= test.settings.duration_s)
      ctx.error(e.where, fmt::format("{}: at {} s the traffic is over (it runs for duration_s {} "
                                     "s); happen earlier, or run the test longer",
                                     what, e.at_s, test.settings.duration_s));
    if (e.action != EventAction::link_up && e.action != EventAction::nic_up) continue;
    const std::string target = target_of(e);
    const bool taken_down =
        std::any_of(test.events.begin(), test.events.end(), [&](const Event& d) {
          return (d.action == EventAction::link_down || d.action == EventAction::nic_down) &&
                 target_of(d) == target && d.at_s < e.at_s;
        });
    if (!taken_down)
      ctx.error(e.where,
                fmt::format("{}: no earlier event takes {} down, so there is nothing "
                            "to bring up; add a {} before at_s {}, or drop this one",
                            what, target,
                            e.action == EventAction::link_up ? "link_down" : "nic_down", e.at_s));
  }
}

}  // namespace detail

}  // namespace rocehil::suites
