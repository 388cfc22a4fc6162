#include "rocehil/run/collective_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {

namespace {

struct RankPlace {
  const inventory::Host* host = nullptr;
  const inventory::Nic* nic = nullptr;
};

}  // namespace

CollectiveRanks collective_ranks(const std::vector<const inventory::Host*>& hosts,
                                 const RankSettings& settings, const std::string& inventory_file,
                                 const std::string& selection) {
  std::vector<RankPlace> places;
  std::vector<traffic::RankSlot> slots;
  std::vector<std::string> racks;
  std::size_t per_host = 0;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    const auto& host = *hosts[h];
    if (host.nics.empty()) continue;  // a capture or management host carries no rank
    if (per_host != 0 && host.nics.size() != per_host &&
        settings.pattern == traffic::Pattern::hierarchical_allreduce)
      throw input_error(fmt::format(
          "{}: hierarchical_allreduce needs the same number of NICs on every host; '{}' has {}, "
          "others {} (select hosts alike, or pick another pattern)",
          inventory_file, host.name, host.nics.size(), per_host));
    per_host = host.nics.size();
    auto rack = std::find(racks.begin(), racks.end(), host.rack);
    if (rack == racks.end()) rack = racks.insert(racks.end(), host.rack);
    for (std::size_t n = 0; n < host.nics.size(); ++n) {
      places.push_back({&host, &host.nics[n]});
      slots.push_back(
          {static_cast<int>(h), static_cast<int>(rack - racks.begin()), static_cast<int>(n)});
    }
  }
  if (places.size() < 2)
    throw input_error(
        fmt::format("{}: selection '{}' gives {} rank(s); a collective needs at least 2 NICs among "
                    "the selected hosts",
                    inventory_file, selection, places.size()));

  CollectiveRanks out;
  out.ranks_per_host = settings.pattern == traffic::Pattern::hierarchical_allreduce
                           ? static_cast<int>(std::max<std::size_t>(per_host, 1))
                           : 1;
  for (const int i : traffic::order_ranks(slots, settings.placement)) {
    const RankPlace& p = places[static_cast<std::size_t>(i)];
    const std::string nic_name = p.nic->netdev.empty() ? p.nic->device : p.nic->netdev;
    out.infos.push_back({p.host->name, nic_name, p.nic->ip});
    agent::SetupRequest s;
    s.provider = settings.provider.empty() ? std::string(inventory::to_string(p.host->provider))
                                           : settings.provider;
    s.device = p.nic->device;
    s.port = static_cast<std::uint8_t>(p.nic->port);
    s.gid_index = p.nic->gid_index;
    s.address = p.nic->ip;
    s.mtu = settings.mtu;
    s.tx_depth = settings.tx_depth;
    s.sl = static_cast<std::uint8_t>(settings.sl);
    s.ack_timeout_us = suites::ack_timeout_us(settings.ack_timeout);
    s.traffic_class = static_cast<std::uint8_t>(settings.traffic_class);
    for (const int c : settings.per_qp_traffic_classes)
      s.traffic_classes.push_back(static_cast<std::uint8_t>(c));
    s.link_gbps = p.nic->link_gbps;
    if (out.provider.empty()) out.provider = s.provider;
    if (out.provider != s.provider) out.provider = "mixed";
    out.setups.push_back(std::move(s));
    remote::AgentCommand command =
        remote::host_command(*p.host, {p.host->agent, "agent"}, settings.multiplex);
    command.name = per_host > 1 ? p.host->name + "/" + nic_name : p.host->name;
    out.commands.push_back(std::move(command));
    out.hosts.push_back(p.host->name);
    out.link_gbps.push_back(p.nic->link_gbps);
  }
  return out;
}

}  // namespace rocehil::run
