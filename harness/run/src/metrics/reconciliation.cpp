#include "rocehil/run/reconciliation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace rocehil::run {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Copies of each crossing frame a mirror of spine links makes: a frame crosses one leaf-to-spine
// and one spine-to-leaf link, so one direction sees it once and `both` twice.
int copies_of(const std::string& direction) {
  return direction == "both" || direction.empty() ? 2 : 1;
}

Reconciliation unmeasured(const std::string& key, std::string why,
                          std::optional<double> mirror = std::nullopt) {
  Reconciliation r;
  r.measured.absent(key, std::move(why));
  r.mirror = mirror;
  return r;
}

}  // namespace

SpineCoverage spine_coverage(const inventory::Inventory& inventory,
                             const std::vector<std::string>& captures,
                             const std::vector<std::string>& hosts) {
  SpineCoverage c;
  std::set<std::string> leaves;
  for (const std::string& name : hosts) {
    const inventory::Host* h = inventory.find_host(name);
    if (h == nullptr || h->rack.empty()) {
      c.why = fmt::format(
          "host {} has no rack in the inventory, so which CNPs cross a spine "
          "cannot be told",
          name);
      return c;
    }
    c.rack_of[name] = h->rack;
    const inventory::Rack* rack = inventory.find_rack(h->rack);
    if (rack == nullptr || rack->leaf.empty()) {
      c.why = fmt::format("rack {} names no leaf in the inventory", h->rack);
      return c;
    }
    leaves.insert(rack->leaf);
  }
  std::vector<std::string> mirrored;
  std::set<int> copies;
  for (const std::string& name : captures)
    if (const inventory::CapturePoint* p = inventory.find_capture(name)) {
      mirrored.insert(mirrored.end(), p->mirrors.links.begin(), p->mirrors.links.end());
      copies.insert(copies_of(p->mirrors.direction));
    }
  if (copies.size() > 1) {
    c.why = "the case's capture points mirror in different directions (one copy and two)";
    return c;
  }
  for (const inventory::Link& l : inventory.links) {
    for (const auto& [leaf_end, far_end] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      const inventory::Switch* far = inventory.find_switch(far_end.node);
      if (!leaves.contains(leaf_end.node) || far == nullptr || far->role != "spine") continue;
      if (!contains(mirrored, l.name)) {
        c.why = fmt::format("link {} ({} to {}) is not mirrored by the case's captures", l.name,
                            leaf_end.node, far_end.node);
        return c;
      }
    }
  }
  if (copies.empty()) {
    c.why = "the case has no capture point";
    return c;
  }
  c.copies = *copies.begin();
  return c;
}

nlohmann::json Reconciliation::to_json() const {
  nlohmann::json j = {{"mirror", nullptr}, {"nics", nullptr}};
  if (mirror) j["mirror"] = *mirror;
  if (nics) j["nics"] = *nics;
  if (switches) j["switches"] = *switches;
  for (const auto& [key, value] : measured.values) j["value"] = value;
  for (const auto& [key, why] : measured.unmeasured) j["unmeasured"] = why;
  return j;
}

Reconciliation cnp_reconciliation(const SpineCoverage& coverage, const std::vector<CnpsSent>& sent,
                                  std::optional<double> mirror_cnps) {
  const std::string key = "cnp_reconciliation";
  if (!mirror_cnps) return unmeasured(key, "no capture ran beside this test");
  if (!coverage.copies) return unmeasured(key, coverage.why, mirror_cnps);
  const auto rack = [&](const std::string& host) {
    const auto it = coverage.rack_of.find(host);
    return it == coverage.rack_of.end() ? std::string() : it->second;
  };
  double crossing = 0;
  for (const CnpsSent& s : sent) {
    std::size_t across = 0;
    for (const std::string& peer : s.peers) across += rack(peer) != rack(s.host) ? 1 : 0;
    if (across == s.peers.size())
      crossing += s.cnps;
    else if (across > 0)
      return unmeasured(key,
                        fmt::format("{} counts its CNPs per port and sent them to hosts in its "
                                    "own rack and in others: those that crossed a mirrored link "
                                    "cannot be told apart",
                                    s.host),
                        mirror_cnps);
  }
  if (crossing == 0)
    return unmeasured(
        key, fmt::format("no CNP was sent across racks (the mirrors saw {})", *mirror_cnps),
        mirror_cnps);
  Reconciliation r;
  r.mirror = mirror_cnps;
  r.nics = crossing * *coverage.copies;
  r.measured.values[key] = *mirror_cnps / *r.nics;
  return r;
}

std::vector<MirroredNicLink> mirrored_nic_links(const inventory::Inventory& inventory,
                                                const std::vector<std::string>& captures,
                                                const std::vector<std::string>& hosts) {
  std::vector<MirroredNicLink> out;
  for (const std::string& name : captures) {
    const inventory::CapturePoint* p = inventory.find_capture(name);
    if (p == nullptr) continue;
    for (const std::string& host : hosts)
      if (const inventory::Host* h = inventory.find_host(host))
        for (const inventory::Nic& nic : h->nics)
          if (!nic.link.empty() && contains(p->mirrors.links, nic.link))
            out.push_back({host, nic.link, p->mirrors.direction, std::nullopt, std::nullopt});
  }
  return out;
}

Reconciliation pfc_reconciliation(const std::vector<MirroredNicLink>& links,
                                  std::optional<double> mirror_pfc_frames, const std::string& key) {
  if (!mirror_pfc_frames) return unmeasured(key, "no capture ran beside this test");
  if (links.empty())
    return unmeasured(key,
                      "the case's captures mirror no link of its hosts' NICs (inventory "
                      "nics[].link); a spine link carries no NIC's pause frames",
                      mirror_pfc_frames);
  double counted = 0;
  for (const MirroredNicLink& l : links) {
    const bool from_host = l.direction != "egress";  // ingress and both see what the host sends
    const bool to_host = l.direction != "ingress";
    for (const auto& [wanted, value, what] :
         {std::tuple{from_host, l.tx_pause, "tx"}, std::tuple{to_host, l.rx_pause, "rx"}}) {
      if (!wanted) continue;
      if (!value)
        return unmeasured(
            key, fmt::format("{}'s NIC on link {} has no {} pause counters", l.host, l.link, what),
            mirror_pfc_frames);
      counted += *value;
    }
  }
  if (counted == 0)
    return unmeasured(key,
                      fmt::format("the NICs counted no pause frame on the mirrored links (the "
                                  "mirrors saw {})",
                                  *mirror_pfc_frames),
                      mirror_pfc_frames);
  Reconciliation r;
  r.mirror = mirror_pfc_frames;
  r.nics = counted;
  r.measured.values[key] = *mirror_pfc_frames / counted;
  return r;
}

}  // namespace rocehil::run
