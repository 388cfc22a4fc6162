#include "rocehil/inventory/names.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <string>

namespace rocehil::inventory {

namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool all_of(std::string_view s, bool (*ok)(char)) {
  return std::all_of(s.begin(), s.end(), ok);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

bool is_dns_label(std::string_view label) {
  return !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
         all_of(label, [](char c) { return is_alnum(c) || c == '-'; });
}

}  // namespace

bool is_valid_name(std::string_view s) {
  return !s.empty() && s.size() <= 63 && is_alnum(s.front()) &&
         all_of(s, [](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_ipv4_address(std::string_view s) {
  if (s.empty() || s.size() > 15) return false;
  in_addr a{};
  return inet_pton(AF_INET, std::string(s).c_str(), &a) == 1;
}

bool is_ip_address(std::string_view s) {
  if (is_ipv4_address(s)) return true;
  if (s.empty() || s.size() > 45) return false;
  in6_addr a{};
  return inet_pton(AF_INET6, std::string(s).c_str(), &a) == 1;
}

bool is_valid_address(std::string_view s) {
  if (is_ip_address(s)) return true;
  if (s.empty() || s.size() > 253) return false;
  // A DNS name whose labels are all digits would read as a (bad) IPv4 address.
  if (all_of(s, [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    if (!is_dns_label(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_valid_user(std::string_view s) {
  return !s.empty() && s.size() <= 32 && s.front() != '-' && s.front() != '.' &&
         all_of(s, [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

bool is_valid_netdev(std::string_view s) {
  return !s.empty() && s.size() <= 15 && s != "." && s != ".." && s.front() != '-' &&
         all_of(s,
                [](char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-' || c == '@'; });
}

bool is_valid_rdma_device(std::string_view s) {
  return !s.empty() && s.size() <= 63 && is_alnum(s.front()) &&
         all_of(s, [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

namespace {

bool is_path_char(char c) {
  return is_alnum(c) || std::string_view("._/+@%,=:~-").find(c) != std::string_view::npos;
}

}  // namespace

bool is_valid_local_path(std::string_view s) {
  if (s.empty() || s.size() > 4096 || !all_of(s, is_path_char)) return false;
  return s.front() == '/' || s.starts_with("~/");
}

bool is_valid_agent_path(std::string_view s) {
  if (s.empty() || s.size() > 4096 || !all_of(s, is_path_char)) return false;
  if (s.front() == '/') return true;
  // A bare command name, found on the remote PATH.
  return s.find('/') == std::string_view::npos && is_alnum(s.front());
}

bool is_valid_jump(std::string_view s) {
  if (const auto at = s.find('@'); at != std::string_view::npos) {
    if (!is_valid_user(s.substr(0, at))) return false;
    s.remove_prefix(at + 1);
  }
  // An IPv6 address has colons of its own: only a name or IPv4 address takes a :port here.
  if (const auto colon = s.rfind(':'); colon != std::string_view::npos && !is_ip_address(s)) {
    const std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !all_of(port, [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    const int value = std::stoi(std::string(port));
    if (value < 1 || value > 65535) return false;
    s = s.substr(0, colon);
  }
  return is_valid_address(s);
}

bool is_valid_ssh_option(std::string_view s) {
  const auto eq = s.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq > 64) return false;
  const std::string_view key = s.substr(0, eq);
  const std::string_view value = s.substr(eq + 1);
  if (!all_of(key, [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }))
    return false;
  // Options whose value ssh runs as a command: the inventory never gets to run commands.
  for (std::string_view runs :
       {"ProxyCommand", "LocalCommand", "PermitLocalCommand", "KnownHostsCommand", "RemoteCommand"})
    if (iequals(key, runs)) return false;
  if (value.empty() || value.size() > 200) return false;
  return all_of(value, [](char c) {
    return c > ' ' && c < 0x7f &&
           std::string_view("\"'`$;|&<>\\").find(c) == std::string_view::npos;
  });
}

bool ssh_option_sets(std::string_view option, std::string_view key) {
  const auto eq = option.find('=');
  return eq != std::string_view::npos && iequals(option.substr(0, eq), key);
}

bool is_valid_dpdk_arg(std::string_view s) {
  return !s.empty() && s.size() <= 512 && all_of(s, [](char c) {
    return c > ' ' && c < 0x7f &&
           std::string_view("\"'`$;|&<>\\").find(c) == std::string_view::npos;
  });
}

}  // namespace rocehil::inventory
