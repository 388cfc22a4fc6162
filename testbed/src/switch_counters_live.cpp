#include <fmt/format.h>

#include "live.hpp"
#include "process.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/switch_counters.hpp"

namespace rocehil::testbed {

std::vector<PortCounters> read_port_counters(std::string_view netns) {
  const std::string table = pfc_table_name(id_of_netns(netns));
  const auto counters =
      parse_nft_counters(command_json("reading the PFC counters",
                                      {"nft", "-j", "list", "counters", "table", "netdev", table}),
                         table);
  const auto queues =
      parse_tbf_stats(command_json("reading the queues", {"tc", "-s", "-j", "qdisc", "show"}));
  const auto ifindexes =
      parse_ifindexes(command_json("reading the interfaces", {"ip", "-j", "link", "show"}));
  return assemble_ports(ifindexes, counters, queues);
}

}  // namespace rocehil::testbed
