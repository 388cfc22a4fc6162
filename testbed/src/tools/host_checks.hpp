#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed {

// Throws rocehil::Error (bad input, exit 2) unless the process runs as root: namespaces, veths,
// qdiscs and nftables need CAP_NET_ADMIN and CAP_SYS_ADMIN.
void require_root(std::string_view command);

// Throws rocehil::Error (bad input, exit 2) naming the first tool missing from PATH and the
// Debian package that has it.
void require_tools(const std::vector<std::string_view>& tools);

}  // namespace rocehil::testbed
