#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The switch settings of a running testbed, changed in place and read back from the kernel, so a
// bisect or a sweep can vary them between runs without a down/up. Named as the settings
// catalogue names them (settings/src/catalogue.cpp); values are Mb/s.
inline constexpr std::string_view ecn_mark_setting = "switch.ecn_mark_mbps";  // nftables limit
inline constexpr std::string_view uplink_setting = "switch.uplink_mbps";      // leaf-spine tbf
inline constexpr std::string_view host_setting = "switch.host_mbps";          // host-leaf tbf

// The three names, in that order.
std::vector<std::string_view> fabric_setting_names();

// `options` with `setting` set to `value`. Throws rocehil::Error (bad input) for a name that is
// not one of fabric_setting_names(), a value out of its range (ecn_mark 1..100000, the shapers
// 0..100000, 0 unshaped), or switch.ecn_mark_mbps on a testbed brought up with --no-ecn.
TestbedOptions with_fabric_setting(TestbedOptions options, std::string_view setting, int value);

// The inverse of ecn_mark_packets_per_second (scripts.hpp): the Mb/s, 1 to 100000, whose rule
// limits at `packets_per_second`; nullopt when no such value writes that rate.
std::optional<int> ecn_mark_mbps_of(long long packets_per_second);

// A tbf rate as `tc -j` prints it (bytes/s) in Mb/s; nullopt when it is not a whole number of
// Mb/s (a qdisc rocehil did not write).
std::optional<int> tbf_mbps_of(std::uint64_t bytes_per_second);

// `nft -j list table ip TABLE`: the rate of each rule's `limit rate over N/second`, in packets per
// second, by the output interface the rule matches. Throws rocehil::Error (infrastructure) when
// the text is not nft's JSON or a limit is not packets per second.
std::map<std::string, long long> parse_ecn_mark_limits(std::string_view nft_json,
                                                       std::string_view table);

// `tc -j qdisc show`: the rate (bytes/s) of each device's root tbf; devices without one are
// absent. Throws rocehil::Error (infrastructure) when the text is not tc's JSON.
std::map<std::string, std::uint64_t> parse_tbf_rates(std::string_view tc_json);

// What the tools printed in each namespace, by its netns name.
struct FabricReadings {
  std::map<std::string, std::string> nft;  // leaves and spines: nft -j list table ip <ecn table>
  std::map<std::string, std::string> tc;   // namespaces with fabric ports: tc -j qdisc show
};

// The settings in force, by name, as decimal strings: the ECN rule of every fabric port of every
// leaf and spine (absent with --no-ecn), the root tbf of every host and uplink port ("0" without
// one). Throws rocehil::Error (infrastructure) when two ports disagree, naming both namespaces,
// interfaces and values; or when a port has no reading, or one rocehil never writes.
std::map<std::string, std::string> fabric_settings_in_force(const Topology& t,
                                                            const TestbedOptions& options,
                                                            const FabricReadings& readings);

// `nft -f` for a leaf or spine: the ECN marking table deleted and written again from
// namespace_nft_ruleset in one transaction, so the port is never without its rule and the rule
// text is `up`'s. Empty where there is no such table.
std::string ecn_marking_replace_batch(const Namespace& ns, const Topology& t,
                                      const TestbedOptions& options);

// `tc -batch`: every `kind` port of `ns` shaped at its rate in `ns` (a topology built with the
// new options) with up's tbf_qdisc, or, at 0, its tbf deleted where `shaped` (the devices that
// have one now) says there is one. Empty when there is nothing to do.
std::string shaping_replace_batch(const Namespace& ns, LinkKind kind, int mtu,
                                  const std::set<std::string>& shaped);

// For the testbed in DIR (DIR/testbed.json), the values in force in the kernel, read with nft
// and tc in its namespaces. Root. Throws rocehil::Error: bad input when DIR holds no testbed that
// is up, infrastructure when a tool fails or the ports disagree (fabric_settings_in_force).
std::map<std::string, std::string> read_fabric_settings(const std::string& dir);

// Changes `setting` to `value` in every namespace it lives in, then records it in DIR's state
// file, so `status` and a later `up` know it. Root. Throws rocehil::Error: bad input as
// with_fabric_setting and read_fabric_settings, infrastructure when nft or tc fails. Reading back
// is the caller's: read_fabric_settings.
void apply_fabric_setting(const std::string& dir, std::string_view setting, int value);

}  // namespace rocehil::testbed
