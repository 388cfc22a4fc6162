#pragma once

// The fabric settings rocehil can change, by name: the DCQCN parameters and per-priority enables
// of a NIC (and of the soft provider, under the same names), PFC and trust, the netdev MTU, and
// the testbed switches' ECN marking rate, link shaping and (on a --lossless testbed) the lossless
// switches' knobs: WRED, PFC, XOFF, the DSCP map and the PFC watchdog. One table says, for each,
// where it is read and written, what values it takes and whether it needs root; `rocehil settings
// list`, docs/settings.md, the suite loader and `--set` all read it.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rocehil::settings {

// What a setting belongs to.
enum class Scope : std::uint8_t {
  nic,          // a host's RDMA NIC, by its netdev; the soft provider keeps the same names
  fabric_link,  // the testbed's switches (their ECN marking, shaping and lossless knobs); a real
                // switch's own configuration is the site's to change
};

enum class ValueKind : std::uint8_t {
  number,      // an integer in [min, max]
  priorities,  // a set of priorities 0-7: "3", "3,4", "none"
  choice,      // one of `choices`
  dscp_map,    // DSCP:CLASS pairs over SONiC's default map: "3:3,46:5", or default (none)
};

struct Setting {
  std::string_view name;  // "roce_rp.rpg_time_reset"
  Scope scope = Scope::nic;
  ValueKind kind = ValueKind::number;
  std::int64_t min = 0, max = 0;  // number
  std::string_view choices;       // choice: "dscp|pcp"
  std::string_view unit;          // "us", "Mb/s", "1/1024", ...; empty: none
  // Where it is read and written on a host with MLNX_OFED's mlx5 driver: a file under
  // /sys/class/net/DEV/ ("ecn/roce_rp/rpg_time_reset"); empty: not there.
  std::string_view sysfs;
  // ... with the upstream mlx5_ib driver: a file under /sys/kernel/debug/mlx5/PCI/cc_params/
  // ("rp_time_reset"); empty: not there.
  std::string_view debugfs;
  // Set through a tool rather than a file ("mlnx_qos or dcb", "ip link"); empty: a file.
  std::string_view tool;
  // The soft provider takes it (traffic/include/rocehil/traffic/soft_settings.hpp): a DCQCN
  // parameter, its CNP interval or DSCP; and the host's pfc and trust (harness/agent's SoftNic).
  // The per-priority ECN enables are NIC-only.
  bool soft = false;
  bool needs_root = true;  // writing it needs root (or passwordless sudo)
  // What ConnectX firmware ships (or the testbed starts with); empty where sites differ and
  // no default can be named (the per-priority enables).
  std::string_view default_;
  std::string_view what;  // one sentence for `settings list` and the docs
};

// Every setting, in the order `settings list` shows them.
std::span<const Setting> catalogue() noexcept;

// The setting named `name`, or nullptr.
const Setting* find(std::string_view name) noexcept;

// The known name nearest `name` (at most 3 edits away, else the first that starts with it), for
// "did you mean"; empty: none.
std::string_view nearest(std::string_view name) noexcept;

// `text` as a value of `s`, written the one way run.json, journals and read-backs compare:
// numbers in decimal, priorities ascending and comma-separated ("none" for the empty set), a
// choice in lower case, DSCP pairs sorted by DSCP ("default" for none). Throws rocehil::Error (bad
// input) saying which values `s` takes.
std::string canonical_value(const Setting& s, std::string_view text);

// The values `s` takes, for messages and docs: "0..1023 (1/1024)", "priorities 0-7: 3,4 or
// none", "dscp or pcp", "DSCP:CLASS pairs ...".
std::string valid_values(const Setting& s);

}  // namespace rocehil::settings
