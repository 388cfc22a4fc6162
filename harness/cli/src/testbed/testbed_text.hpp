#pragma once

#include <string>

#include "rocehil/testbed/testbed.hpp"

namespace rocehil::cli {

// What `rocehil testbed up` prints for a person: where the inventory is and how to log in.
std::string render_up_text(const testbed::UpResult& up);

// `rocehil testbed status`: namespaces with their addresses, sshd, snmpd and lldpd, then every
// interface with the link it belongs to, the far end, state and counters.
std::string render_status_text(const testbed::StatusResult& status);

}  // namespace rocehil::cli
