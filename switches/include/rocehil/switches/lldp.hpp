#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rocehil/switches/snapshot.hpp"
#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {

// One neighbour a switch's LLDP agent has heard on one of its ports.
struct LldpNeighbor {
  std::string local_port;  // the switch's own port name (ifName where lldpLocPortNum is an ifIndex)
  std::uint32_t local_port_num = 0;
  std::string remote_system;  // lldpRemSysName
  std::string remote_port_id;
  int remote_port_id_subtype = 0;  // 1 ifAlias, 3 MAC, 5 ifName, 7 local, ...
  std::string remote_port_descr;

  // Whether the neighbour's port is `port`: its port ID when that is a name (subtypes 1, 5, 7),
  // else its description. Switches send either, so both are tried.
  bool remote_port_is(const std::string& port) const;
  // "spine01:Ethernet1/1", as LLDP names the far end.
  std::string remote() const;
};

struct LldpView {
  std::string switch_name;
  std::string error;  // did not answer
  std::vector<LldpNeighbor> neighbors;
  bool answered() const { return error.empty(); }
};

// The columns an LLDP view walks (lldpLocPortTable, lldpRemTable, and ifName to name ports).
const std::vector<Oid>& lldp_columns();

// Builds the neighbour list from the rows of lldp_columns(). A local port is named by ifName
// when lldpLocPortNum is an ifIndex the agent names, else by lldpLocPortId, else lldpLocPortDesc.
LldpView build_lldp_view(const std::string& switch_name, const std::vector<Varbind>& rows);

}  // namespace rocehil::switches
