#pragma once

#include <string_view>

namespace rocehil::inventory {

// What the inventory accepts for each kind of string. Everything is a strict allow-list: values
// end up in ssh command lines and remote argv, and nothing in an inventory should ever look like
// shell syntax, even though the launcher quotes every word anyway.

// Host, switch, rack, link, capture and label names: a letter or digit, then letters, digits,
// '.', '_', '-'; at most 63 characters.
bool is_valid_name(std::string_view s);
// An IPv4 or IPv6 address in text form.
bool is_ip_address(std::string_view s);
bool is_ipv4_address(std::string_view s);
// What ssh may connect to: an IP address or a DNS name (labels of letters, digits and '-').
bool is_valid_address(std::string_view s);
// A login name: letters, digits, '_', '.', '-', not starting with '-'.
bool is_valid_user(std::string_view s);
// A Linux interface name: 1-15 of letters, digits, '.', '_', '-', '@'.
bool is_valid_netdev(std::string_view s);
// An RDMA device name such as mlx5_0 or rocep1s0f0.
bool is_valid_rdma_device(std::string_view s);
// A file path: letters, digits and . _ / + @ % , = : ~ -; absolute or starting with "~/".
bool is_valid_local_path(std::string_view s);
// The agent on a remote host: an absolute path, or a bare command name found on its PATH.
bool is_valid_agent_path(std::string_view s);
// ssh -J target: [user@]host[:port].
bool is_valid_jump(std::string_view s);
// ssh -o Key=Value: a known-safe shape, and never an option that makes ssh run a command
// (ProxyCommand, LocalCommand, PermitLocalCommand, KnownHostsCommand).
bool is_valid_ssh_option(std::string_view s);
// Whether a Key=Value ssh option sets `key` (ssh reads keys in any case).
bool ssh_option_sets(std::string_view option, std::string_view key);
// A DPDK EAL argument: printable, no spaces or quotes.
bool is_valid_dpdk_arg(std::string_view s);

}  // namespace rocehil::inventory
