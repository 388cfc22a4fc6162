#pragma once

// net-snmp's C API behind small RAII types, so the rest of the module never sees its structs.

#include <string>

#include "rocehil/switches/access.hpp"
#include "rocehil/switches/varbind.hpp"

struct variable_list;

namespace rocehil::switches::detail {

// Initialises the library once per process: no configuration or MIB files are read (rocehil
// names objects by number), nothing persistent is written, and the library logs nothing (only
// the command line prints; errors come back as values).
void init_net_snmp();

// One opened single-session handle (snmp_sess_open), closed on destruction.
class Session {
 public:
  // Opens a session to `address` (IPv4, [IPv6] or a name) with the credentials. For SNMPv3,
  // net-snmp 5.9 discovers the engine ID here, synchronously, bounded by timeout x retries.
  // On failure, handle() is null and error() says why.
  Session(const std::string& address, const SnmpCredentials& credentials);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void* handle() const { return handle_; }
  const std::string& error() const { return error_; }
  // The library's last error for this session, as a line.
  std::string last_error() const;

 private:
  void* handle_ = nullptr;
  std::string error_;
};

Value value_of(const variable_list& v);

}  // namespace rocehil::switches::detail
