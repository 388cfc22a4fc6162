#pragma once

// Taking a switch port down or up over SNMP: a SET of IF-MIB ifAdminStatus, the standard way
// when a switch gives no CLI command for it (a suite's link events, `rocehil switches port`).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/switches/access.hpp"
#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {

// ifAdminStatus's values (RFC 2863); testing(3) is never set.
enum class AdminStatus { up = 1, down = 2 };
std::string_view to_string(AdminStatus s);  // "up", "down"
long admin_status_number(AdminStatus s);    // 1, 2
// What an agent's ifAdminStatus says: up, down, or nullopt (testing, any other number, a value
// that is no INTEGER).
std::optional<AdminStatus> admin_status_of(const Value& v);

// The ifIndex of `port` among walked ifName and ifDescr rows (mib::if_name, mib::if_descr): by
// ifName first (SONiC's Ethernet0, Linux's swp1), then ifDescr for agents without ifXTable (on
// some, ifDescr is a long description and names no port). Exact, case-sensitive; nullopt when
// neither names it.
std::optional<std::uint32_t> if_index_of(const std::vector<Varbind>& rows, const std::string& port);
// Every ifName among the rows (ifDescr where an ifIndex has no ifName), by ifIndex: what an
// unknown port's error lists.
std::vector<std::string> port_names(const std::vector<Varbind>& rows);

struct PortAdminResult {
  std::string switch_name;
  std::string port;
  std::uint32_t if_index = 0;
  AdminStatus status = AdminStatus::up;  // as read back after the SET
};

// Sets `port`'s ifAdminStatus on switch `s`: its ifIndex from ifName/ifDescr (walked with the
// read credentials), a SET with the write credentials (read_write_credentials), then a GET with
// the read credentials that must read what was set (an agent may apply it a moment later: read
// for up to 2 s). Secrets go to net-snmp's library only, never to a command line.
// Throws rocehil::Error naming the switch and port: bad input (exit 2) for a switch without snmp
// or a write credential, a port the agent does not list, or a SET the agent refuses (noAccess,
// notWritable: the credential lacks write access, with the fix); infrastructure (exit 3) for no
// answer and anything else.
PortAdminResult set_port_admin_status(const inventory::Switch& s, const std::string& port,
                                      AdminStatus wanted,
                                      const EnvLookup& env = process_environment());

}  // namespace rocehil::switches
