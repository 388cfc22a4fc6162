#include "rocehil/switches/cabling.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

namespace rocehil::switches {

std::string_view to_string(CablingFinding::Kind kind) {
  switch (kind) {
    case CablingFinding::Kind::ok: return "ok";
    case CablingFinding::Kind::miscabled: return "miscabled";
    case CablingFinding::Kind::missing: return "missing";
    case CablingFinding::Kind::extra: return "extra";
    case CablingFinding::Kind::unverified: return "unverified";
  }
  return "?";
}

namespace {

std::string end_text(const inventory::LinkEnd& e) {
  return fmt::format("{}:{}", e.node, e.port);
}

// LLDP system names are often fully qualified ("leaf01.lab.example.com").
bool same_system(const std::string& lldp_name, const std::string& node) {
  return lldp_name == node ||
         (lldp_name.size() > node.size() && lldp_name.compare(0, node.size(), node) == 0 &&
          lldp_name[node.size()] == '.');
}

bool neighbor_is(const LldpNeighbor& n, const inventory::LinkEnd& e) {
  return same_system(n.remote_system, e.node) && n.remote_port_is(e.port);
}

class Checker {
 public:
  Checker(const inventory::Inventory& inv, const std::vector<LldpView>& views) : inv_(inv) {
    for (const auto& v : views) views_[v.switch_name] = &v;
  }

  std::vector<CablingFinding> run() {
    for (const auto& link : inv_.links) check(link);
    extras();
    return std::move(out_);
  }

 private:
  void check(const inventory::Link& link) {
    const std::string expected = end_text(link.a) + " - " + end_text(link.b);
    bool checked = false, all_ok = true;
    bool on_a_switch = false;
    std::vector<std::string> unread;
    for (const auto& [end, other] : {std::pair{&link.a, &link.b}, std::pair{&link.b, &link.a}}) {
      if (!inv_.find_switch(end->node)) continue;
      on_a_switch = true;
      const auto it = views_.find(end->node);
      if (it == views_.end() || !it->second->answered()) {
        unread.push_back(end->node);
        continue;
      }
      checked = true;
      named_ports_.insert({end->node, end->port});
      std::vector<const LldpNeighbor*> heard;
      for (const auto& n : it->second->neighbors)
        if (n.local_port == end->port) heard.push_back(&n);
      bool match = false;
      for (const auto* n : heard) match = match || neighbor_is(*n, *other);
      if (match) continue;
      all_ok = false;
      CablingFinding f;
      f.link = link.name;
      f.expected = expected;
      if (heard.empty()) {
        f.kind = CablingFinding::Kind::missing;
        f.seen = end_text(*end) + " - (no LLDP neighbour)";
        f.message = fmt::format(
            "link '{}': {} hears no LLDP neighbour; the design says it is "
            "cabled to {} (check the cable and that LLDP runs on {})",
            link.name, end_text(*end), end_text(*other), other->node);
      } else {
        f.kind = CablingFinding::Kind::miscabled;
        const LldpNeighbor& n = *heard.front();
        f.seen = end_text(*end) + " - " + n.remote();
        const std::string owner = link_owning(n);
        f.message = fmt::format(
            "link '{}': the design says {} - {}, but LLDP on {} sees {}{}", link.name,
            end_text(*end), end_text(*other), end_text(*end), n.remote(),
            owner.empty() ? std::string()
                          : fmt::format(" (an end of link '{}': the two are swapped)", owner));
      }
      out_.push_back(std::move(f));
    }
    if (!on_a_switch) return;
    if (!checked) {
      out_.push_back({CablingFinding::Kind::unverified,
                      link.name,
                      expected,
                      "",
                      fmt::format("link '{}': no switch at its ends answered LLDP-MIB, so it is "
                                  "not checked",
                                  link.name),
                      {}});
    } else if (all_ok) {
      out_.push_back({CablingFinding::Kind::ok, link.name, expected, expected,
                      unread.empty()
                          ? fmt::format("link '{}': {} as designed", link.name, expected)
                          : fmt::format("link '{}': {} as designed, seen from one end ({} did "
                                        "not answer)",
                                        link.name, expected, fmt::join(unread, ", ")),
                      unread});
    }
  }

  // The link one of whose ends is the neighbour LLDP heard, other than none.
  std::string link_owning(const LldpNeighbor& n) const {
    for (const auto& l : inv_.links)
      for (const auto* e : {&l.a, &l.b})
        if (neighbor_is(n, *e)) return l.name;
    return {};
  }

  void extras() {
    if (inv_.links.empty()) return;
    for (const auto& [name, view] : views_) {
      if (!view->answered()) continue;
      for (const auto& n : view->neighbors) {
        if (named_ports_.count({name, n.local_port})) continue;
        const std::string here = fmt::format("{}:{}", name, n.local_port);
        out_.push_back({CablingFinding::Kind::extra,
                        "",
                        "",
                        here + " - " + n.remote(),
                        fmt::format("{} hears {} over LLDP, but no link in the inventory names "
                                    "{}; add the link, or remove the cable",
                                    here, n.remote(), here),
                        {}});
      }
    }
  }

  const inventory::Inventory& inv_;
  std::map<std::string, const LldpView*> views_;
  std::set<std::pair<std::string, std::string>> named_ports_;
  std::vector<CablingFinding> out_;
};

std::string remote_port_name(const LldpNeighbor& n) {
  const std::string r = n.remote();
  return r.substr(r.find(':') + 1);
}

}  // namespace

std::vector<CablingFinding> check_cabling(const inventory::Inventory& inventory,
                                          const std::vector<LldpView>& views) {
  return Checker(inventory, views).run();
}

std::vector<inventory::Link> links_from_lldp(const std::vector<LldpView>& views) {
  std::vector<inventory::Link> links;
  std::set<std::pair<std::string, std::string>> seen;
  std::map<std::string, int> names;
  std::set<std::string> switches;
  for (const auto& v : views) switches.insert(v.switch_name);
  // "l1.lab.example.com" heard by a spine is the switch l1 polled by its short name.
  const auto node_of = [&](const std::string& system) {
    const std::string first = system.substr(0, system.find('.'));
    return switches.count(first) ? first : system;
  };
  for (const auto& v : views) {
    if (!v.answered()) continue;
    for (const auto& n : v.neighbors) {
      if (n.remote_system.empty()) continue;
      inventory::LinkEnd a{v.switch_name, n.local_port};
      inventory::LinkEnd b{node_of(n.remote_system), remote_port_name(n)};
      if (end_text(b) < end_text(a)) std::swap(a, b);
      if (!seen.insert({end_text(a), end_text(b)}).second) continue;
      std::string name = a.node + "-" + b.node;
      if (const int k = ++names[name]; k > 1) name += fmt::format("-{}", k);
      links.push_back({name, a, b, 0, {}});
    }
  }
  return links;
}

}  // namespace rocehil::switches
