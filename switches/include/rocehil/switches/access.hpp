#pragma once

#include <functional>
#include <optional>
#include <string>

#include "rocehil/inventory/inventory.hpp"

namespace rocehil::switches {

// An inventory's SNMP settings with their secrets read. Lives only in memory, for the sessions;
// nothing that prints or serialises takes it.
struct SnmpCredentials {
  inventory::SnmpSettings settings;
  std::string community;
  std::string auth_key;
  std::string priv_key;
};

// Looks an environment variable up; the default reads the process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// Reads each secret from its file (first line, without the line end) or variable. Throws
// rocehil::Error (bad input) naming the switch, the field, the file or variable and the fix.
SnmpCredentials read_credentials(const std::string& switch_name,
                                 const inventory::SnmpSettings& settings,
                                 const EnvLookup& env = process_environment());

// The credentials for a SET: v2c's write community (write_community_file / _env) in `community`,
// or v3's own user and keys where the settings say `writable`. Read only when a SET is made, so
// polling never needs the write secret. Throws rocehil::Error (bad input) naming the switch when
// the settings give no write credential or its secret cannot be read.
SnmpCredentials read_write_credentials(const std::string& switch_name,
                                       const inventory::SnmpSettings& settings,
                                       const EnvLookup& env = process_environment());

}  // namespace rocehil::switches
