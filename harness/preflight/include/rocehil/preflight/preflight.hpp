#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/preflight/host_facts.hpp"

namespace rocehil::preflight {

// `rocehil inventory check`: what the inventory says against what a host has.

enum class CheckStatus { ok, info, warn, fail, skip };
std::string_view to_string(CheckStatus s);

struct CheckItem {
  std::string name;  // "ssh", "agent", "netdev t7345-nic0", "gid mlx5_0/1/3", "pfc ens1f0", ...
  CheckStatus status = CheckStatus::ok;
  std::string detail;  // what was found, and for warn/fail what to do
};

enum class HostVerdict { ok, soft_only, failed, unreachable };
std::string_view to_string(HostVerdict v);  // "ok", "soft only", "failed", "unreachable"

struct HostCheck {
  std::string host;
  std::string address;
  HostVerdict verdict = HostVerdict::ok;
  double ssh_ms = 0;        // time to connect and run the probe
  std::string unreachable;  // ssh's reason when unreachable
  std::vector<CheckItem> items;
  std::optional<HostFacts> facts;
};

// Compares a probe's facts with the host's inventory entry. `controller_version` is this
// binary's "rocehil X.Y.Z"; the agent must print the same.
std::vector<CheckItem> evaluate_host(const inventory::Host& host, const HostFacts& facts,
                                     std::string_view controller_version);
// failed if any item failed; soft only when the host has no RDMA device and its provider is
// soft (with verbs demanded, no RDMA device is a failure); ok otherwise.
HostVerdict verdict_of(const inventory::Host& host, const HostFacts& facts,
                       const std::vector<CheckItem>& items);

// True when a GID as sysfs writes it (eight groups of four hex digits) carries `ip`: an IPv6
// address itself, an IPv4 address as ::ffff:a.b.c.d.
bool gid_carries_ip(std::string_view gid, std::string_view ip);

struct CheckReport {
  std::string inventory_file;
  std::string inventory_name;
  std::string selection;
  std::string controller_version;
  std::vector<HostCheck> hosts;  // in inventory order
};

// schema_version 1: {schema_version, inventory, name, selection, controller_version,
// summary: {ok, soft_only, failed, unreachable}, hosts: [{name, address, verdict, ssh_ms,
// unreachable?, checks: [{name, status, detail}], facts}]}
nlohmann::json to_json(const CheckReport& report);

}  // namespace rocehil::preflight
