#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// The switch settings of a running testbed, changed in place and read back from the kernel (and,
// on a --lossless testbed, from the switches' forwarding processes' configurations), so a bisect
// or a sweep can vary them between runs without a down/up. Named as the settings catalogue names
// them (settings/src/catalogue.cpp); the rates are Mb/s.
inline constexpr std::string_view ecn_mark_setting = "switch.ecn_mark_mbps";  // nftables limit
inline constexpr std::string_view uplink_setting = "switch.uplink_mbps";      // leaf-spine tbf
inline constexpr std::string_view host_setting = "switch.host_mbps";          // host-leaf tbf

// The three rates, in that order.
std::vector<std::string_view> fabric_setting_names();
// Every setting `testbed set` takes: the three rates, then the lossless switches' knobs
// (knob_names(), switch_knobs.hpp); the order `testbed settings` prints them in.
std::vector<std::string_view> switch_setting_names();

// `options` with rate `setting` set to `value`. Throws rocehil::Error (bad input) for a name that
// is not one of fabric_setting_names(), a value out of its range (ecn_mark 1..100000, the shapers
// 0..100000, 0 unshaped), or switch.ecn_mark_mbps on a testbed brought up with --no-ecn or with
// --lossless (whose switches mark by queue depth).
TestbedOptions with_fabric_setting(TestbedOptions options, std::string_view setting, int value);

// `options` with every (setting, text) of `assignments` set, all checked before the caller
// changes anything: a rate as with_fabric_setting (its text a whole number), the knobs together
// as with_knobs, and only on a --lossless testbed. Throws rocehil::Error (bad input), one line
// naming the setting and the fix.
TestbedOptions with_switch_settings(
    TestbedOptions options, const std::vector<std::pair<std::string, std::string>>& assignments);

// `setting`'s value in `options` as read_fabric_settings writes it (the catalogue's canonical
// form: "300", "3,4" or "none", "3:3,46:5" or "default").
std::string switch_setting_text(const TestbedOptions& options, std::string_view setting);

// The order to write `wanted` in, one setting at a time (a run's --set), so that every step
// leaves knobs a switch takes: WRED's kmax before its kmin when the new kmin is above the kmax
// `in_force`, kmin first otherwise (undone in reverse, each step is then valid again). The rest
// keep their order.
std::vector<std::pair<std::string, std::string>> switch_settings_write_order(
    const std::map<std::string, std::string>& in_force,
    std::vector<std::pair<std::string, std::string>> wanted);

// One place's value of a setting: a port ("rocehil-t1-l1 t1-s1") or a switch's configuration.
struct SettingReading {
  std::string where;
  std::string value;
};

// The value every reading of `setting` holds. Throws rocehil::Error (infrastructure) when they
// differ, naming a reading that differs from most of the others and one of those others, and
// how to set it again on the testbed in `dir`; `noun` and `nouns` say what a reading is ("port",
// "ports"; "switch", "switches").
std::string agreed_value(std::string_view setting, std::string_view noun, std::string_view nouns,
                         const std::vector<SettingReading>& readings, const std::string& dir);

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
// new `options`) with up's qdisc (port_qdisc: a --vm guest's deep NIC queue, 1 ms of queue on a
// --lossless testbed's hosts, else 5), or, at 0, its tbf deleted where `shaped` (the devices
// that have one now) says there is one. Empty when there is nothing to do.
std::string shaping_replace_batch(const Namespace& ns, LinkKind kind, const TestbedOptions& options,
                                  const std::set<std::string>& shaped);

// For the testbed in DIR (DIR/testbed.json), the values in force: read with nft and tc in its
// namespaces, and on a --lossless testbed from each switch's forwarding process's configuration
// (DIR/switchd/NETNS.json: the knobs and its ports' rates) and the hosts' tbf. Root. Throws
// rocehil::Error: bad input when DIR holds no testbed that is up, infrastructure when a tool fails
// or the ports or switches disagree (fabric_settings_in_force, lossless_settings_in_force).
std::map<std::string, std::string> read_fabric_settings(const std::string& dir);

// Sets every (setting, text) of `assignments` (with_switch_settings, checked against DIR's
// testbed before anything changes) in every namespace it lives in, and on a --lossless testbed
// in every switch's configuration, which its forwarding process reads again (SIGHUP); then
// records them in DIR's state file, so `status` and a later `up` know them. Returns what each
// setting was set to, as read_fabric_settings writes it. Root. Throws rocehil::Error: bad input
// as with_switch_settings and read_fabric_settings, infrastructure when nft or tc fails or a
// forwarding process is gone. Reading back is the caller's: read_fabric_settings.
std::map<std::string, std::string> apply_fabric_settings(
    const std::string& dir, const std::vector<std::pair<std::string, std::string>>& assignments);

}  // namespace rocehil::testbed
