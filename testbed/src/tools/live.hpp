#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::testbed {

// What exists on this machine now, read back from the kernel through iproute2's JSON output.

// A command's JSON output parsed (empty output: an empty array); throws rocehil::Error
// (infrastructure) naming `what` when the command fails or its output does not parse.
nlohmann::json command_json(std::string_view what, const std::vector<std::string>& argv);

// As command_json, with the command run inside network namespace `netns` (/run/netns/NETNS). A
// thread of this process enters the namespace and starts the tool from there, which costs one
// process where `ip netns exec` costs two and a mount namespace with /sys mounted again: reading
// a 256-host testbed's PFC counters that way cost more CPU than nft itself.
nlohmann::json command_json_in(std::string_view what, const std::string& netns,
                               const std::vector<std::string>& argv);

// `ip [-n netns] -j ARGS...` parsed; throws rocehil::Error (infrastructure) when ip fails.
nlohmann::json ip_json(std::string_view netns, const std::vector<std::string>& args);

// Namespaces whose names start with rocehil-<id>-.
std::vector<std::string> testbed_namespaces(std::string_view id);

// Links in the root namespace whose names start with <id>- (the bridge, management veths).
std::vector<std::string> root_links(std::string_view id);

// Destination prefixes of the root namespace's IPv4 routes ("default" left out).
std::vector<std::string> root_route_prefixes();

// The directory as an absolute, normal path (it need not exist).
std::string absolute_dir(const std::string& dir);

// Connects to address:22 and reads sshd's identification line. True when it starts "SSH-2.0-";
// `detail` gets the line or the reason there was none.
bool ssh_banner(const std::string& address, int timeout_ms, std::string& detail);

}  // namespace rocehil::testbed
