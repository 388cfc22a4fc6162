#include "rocehil/settings/catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <vector>

#include "rocehil/common/edit_distance.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::settings {

namespace {

constexpr std::int64_t u32_max = 0xffffffff;

// The reaction point's parameters: sysfs ecn/roce_rp/NAME (MLNX_OFED) and debugfs
// cc_params/rp_NAME (upstream mlx5_ib, drivers/infiniband/hw/mlx5/cong.c); the firmware's
// command layout (mlx5_ifc.h, cong_control_r_roce_ecn_rp) gives most of them 32 bits, the ranges
// below narrower where mlxconfig's parameter help gives one. Defaults: what ConnectX-4 to -7
// firmware ships (`mlxconfig q`, sysfs dumps; traffic/src/soft/dcqcn.hpp lists the sources).
constexpr Setting rp(std::string_view name, std::string_view sysfs, std::string_view debugfs,
                     std::int64_t min, std::int64_t max, std::string_view unit, bool soft,
                     std::string_view default_, std::string_view what) {
  Setting s;
  s.name = name;
  s.sysfs = sysfs;
  s.debugfs = debugfs;
  s.min = min;
  s.max = max;
  s.unit = unit;
  s.soft = soft;
  s.default_ = default_;
  s.what = what;
  return s;
}

constexpr Setting priorities(std::string_view name, std::string_view sysfs, std::string_view tool,
                             bool soft, std::string_view default_, std::string_view what) {
  Setting s;
  s.name = name;
  s.kind = ValueKind::priorities;
  s.sysfs = sysfs;
  s.tool = tool;
  s.soft = soft;
  s.default_ = default_;
  s.what = what;
  return s;
}

constexpr Setting fabric_link(std::string_view name, std::int64_t min, std::int64_t max,
                              std::string_view default_, std::string_view what) {
  Setting s;
  s.name = name;
  s.scope = Scope::fabric_link;
  s.min = min;
  s.max = max;
  s.unit = "Mb/s";
  s.tool = "the testbed (nftables, tc)";
  s.default_ = default_;
  s.what = what;
  return s;
}

// A knob of the lossless switches of a `testbed up --lossless` (SwitchKnobs, testbed/options.hpp,
// whose validate_knobs holds the same ranges); their defaults are SONiC's RoCE profile's scaled
// to the testbed's 1 Gb/s ports.
constexpr Setting switch_knob(std::string_view name, ValueKind kind, std::int64_t min,
                              std::int64_t max, std::string_view unit, std::string_view default_,
                              std::string_view what) {
  Setting s;
  s.name = name;
  s.scope = Scope::fabric_link;
  s.kind = kind;
  s.min = min;
  s.max = max;
  s.unit = unit;
  s.tool = "the testbed's lossless switches (testbed up --lossless)";
  s.default_ = default_;
  s.what = what;
  return s;
}

Setting trust_setting() {
  Setting s;
  s.name = "trust";
  s.kind = ValueKind::choice;
  s.choices = "dscp|pcp";
  s.tool = "mlnx_qos -i DEV --trust, or dcb apptrust";
  s.soft = true;
  s.default_ = "pcp";
  s.what = "which field of a received frame picks its priority: the IP DSCP or the VLAN PCP";
  return s;
}

Setting mtu_setting() {
  Setting s;
  s.name = "mtu";
  s.min = 1280;
  s.max = 9978;  // mlx5's largest
  s.unit = "bytes";
  s.sysfs = "mtu";
  s.tool = "ip link set dev DEV mtu N";
  // The soft provider's path MTU is its run's `mtu` (what a QP is set up with), not a netdev's.
  s.soft = false;
  s.default_ = "1500";
  s.what = "the netdev's MTU; RoCE's active MTU follows it (9000 gives path MTU 4096)";
  return s;
}

const std::vector<Setting>& table() {
  static const std::vector<Setting> settings = {
      priorities("roce_rp.enable", "ecn/roce_rp/enable", "", true, "",
                 "priorities whose flows slow down on CNPs (the DCQCN reaction point)"),
      rp("roce_rp.clamp_tgt_rate", "ecn/roce_rp/clamp_tgt_rate", "rp_clamp_tgt_rate", 0, 1, "",
         true, "0", "1: every rate cut also sets the target rate to the current rate"),
      rp("roce_rp.clamp_tgt_rate_ati", "ecn/roce_rp/clamp_tgt_rate_ati", "rp_clamp_tgt_rate_ati", 0,
         1, "", true, "1", "1: a cut after a timer increase sets the target rate too"),
      rp("roce_rp.rpg_time_reset", "ecn/roce_rp/rpg_time_reset", "rp_time_reset", 0, u32_max, "us",
         true, "300", "time between rate-increase timer events without a cut"),
      rp("roce_rp.rpg_byte_reset", "ecn/roce_rp/rpg_byte_reset", "rp_byte_reset", 0, 32767, "bytes",
         true, "32767", "bytes sent between byte-counter increase events (0: off)"),
      rp("roce_rp.rpg_threshold", "ecn/roce_rp/rpg_threshold", "rp_threshold", 0, 31, "", true, "1",
         "increase events counted in fast recovery before additive, then hyper increase"),
      rp("roce_rp.rpg_max_rate", "ecn/roce_rp/rpg_max_rate", "rp_max_rate", 0, u32_max, "Mb/s",
         false, "0", "the rate a limited flow is released at (0: the port's speed)"),
      rp("roce_rp.rpg_ai_rate", "ecn/roce_rp/rpg_ai_rate", "rp_ai_rate", 0, u32_max, "Mb/s", true,
         "5", "step of additive increase"),
      rp("roce_rp.rpg_hai_rate", "ecn/roce_rp/rpg_hai_rate", "rp_hai_rate", 0, u32_max, "Mb/s",
         true, "50", "step of hyper increase"),
      rp("roce_rp.rpg_gd", "ecn/roce_rp/rpg_gd", "rp_gd", 0, 15, "log2", true, "11",
         "log2 of Gd in a cut to (1 - alpha/Gd) of the rate"),
      rp("roce_rp.rpg_min_dec_fac", "ecn/roce_rp/rpg_min_dec_fac", "rp_min_dec_fac", 1, 100, "%",
         true, "50", "a cut never leaves less than this share of the rate"),
      rp("roce_rp.rpg_min_rate", "ecn/roce_rp/rpg_min_rate", "rp_min_rate", 0, u32_max, "Mb/s",
         true, "1", "floor of a limited flow's rate"),
      rp("roce_rp.rate_to_set_on_first_cnp", "ecn/roce_rp/rate_to_set_on_first_cnp",
         "rp_rate_to_set_on_first_cnp", 0, u32_max, "Mb/s", false, "0",
         "the rate a flow is set to on its first CNP (0: cut as on any CNP)"),
      rp("roce_rp.dce_tcp_g", "ecn/roce_rp/dce_tcp_g", "rp_dce_tcp_g", 0, 1023, "1/1024", true,
         "1019", "gain of the congestion estimate (alpha) update"),
      rp("roce_rp.dce_tcp_rtt", "ecn/roce_rp/dce_tcp_rtt", "rp_dce_tcp_rtt", 0, u32_max, "us", true,
         "1", "period of the alpha update"),
      rp("roce_rp.rate_reduce_monitor_period", "ecn/roce_rp/rate_reduce_monitor_period",
         "rp_rate_reduce_monitor_period", 0, u32_max, "us", true, "4",
         "least time between two cuts of one flow"),
      rp("roce_rp.initial_alpha_value", "ecn/roce_rp/initial_alpha_value", "rp_initial_alpha_value",
         0, 1023, "1/1024", true, "1023", "alpha a flow starts with on its first CNP"),
      priorities("roce_np.enable", "ecn/roce_np/enable", "", true, "",
                 "priorities on which received CE marks make CNPs (the notification point)"),
      rp("roce_np.min_time_between_cnps", "ecn/roce_np/min_time_between_cnps",
         "np_min_time_between_cnps", 0, u32_max, "us", true, "4",
         "least time between two CNPs to one QP"),
      rp("roce_np.cnp_dscp", "ecn/roce_np/cnp_dscp", "np_cnp_dscp", 0, 63, "", true, "48",
         "DSCP of the CNPs sent"),
      rp("roce_np.cnp_802p_prio", "ecn/roce_np/cnp_802p_prio", "np_cnp_prio", 0, 7, "", false, "6",
         "VLAN priority (PCP) of the CNPs sent"),
      priorities("pfc", "", "mlnx_qos -i DEV --pfc, or dcb pfc set dev DEV prio-pfc", true, "none",
                 "priorities with PFC (lossless) on"),
      trust_setting(),
      mtu_setting(),
      fabric_link("switch.ecn_mark_mbps", 1, 100'000, "300",
                  "rate per egress port above which the testbed's switches mark ECN CE"),
      fabric_link("switch.uplink_mbps", 0, 100'000, "400",
                  "the testbed's leaf-spine link rate (0: not shaped)"),
      fabric_link("switch.host_mbps", 0, 100'000, "1000",
                  "the testbed's host-leaf link rate (0: not shaped)"),
      switch_knob("switch.ecn_enable", ValueKind::number, 0, 1, "", "1",
                  "1: the lossless switches' WRED marks CE on ECN-capable packets of the lossless "
                  "queues; 0: PFC alone holds them"),
      switch_knob("switch.pfc_priorities", ValueKind::priorities, 0, 0, "", "3,4",
                  "the lossless switches' lossless classes: PFC sent and obeyed, never dropped "
                  "(none: a lossy fabric)"),
      switch_knob("switch.wred_kmin_kb", ValueKind::number, 1, 1'000'000, "KB", "50",
                  "queue depth (1000 bytes) where WRED starts marking a lossless queue"),
      switch_knob("switch.wred_kmax_kb", ValueKind::number, 1, 1'000'000, "KB", "200",
                  "queue depth (1000 bytes) from which WRED marks every packet; not below kmin"),
      switch_knob("switch.wred_pmax_percent", ValueKind::number, 0, 100, "%", "20",
                  "WRED's marking probability at kmax, rising linearly from 0 at kmin"),
      switch_knob("switch.xoff_kb", ValueKind::number, 10, 1'000'000, "KB", "250",
                  "bytes (1000) an ingress port and priority holds before the switch sends XOFF"),
      switch_knob("switch.dscp_to_tc", ValueKind::dscp_map, 0, 0, "", "default",
                  "DSCP:CLASS pairs over SONiC's default DSCP-to-class map (default: SONiC's)"),
      switch_knob("switch.pfc_watchdog_detection_ms", ValueKind::number, 0, 60'000, "ms", "200",
                  "how long a lossless queue stays paused before the PFC watchdog calls it a "
                  "storm and drains it (0: no watchdog)"),
      switch_knob("switch.pfc_watchdog_restoration_ms", ValueKind::number, 1, 60'000, "ms", "200",
                  "how long a stormed queue must see no pause before the watchdog restores it"),
  };
  return settings;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  return t;
}

[[noreturn]] void bad_value(const Setting& s, std::string_view text) {
  throw input_error(
      fmt::format("{}: '{}' is not a value it takes; it takes {}", s.name, text, valid_values(s)));
}

std::string canonical_number(const Setting& s, std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < s.min || v > s.max)
    bad_value(s, text);
  return std::to_string(v);
}

std::string canonical_priorities(const Setting& s, std::string_view text) {
  if (lower(text) == "none") return "none";
  std::bitset<8> set;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.size() != 1 || item[0] < '0' || item[0] > '7') bad_value(s, text);
    set.set(static_cast<std::size_t>(item[0] - '0'));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::string out;
  for (std::size_t p = 0; p < 8; ++p)
    if (set[p]) {
      if (!out.empty()) out += ',';
      out += static_cast<char>('0' + p);
    }
  return out;
}

// "46:5, 3:3" is "3:3,46:5"; "default" (or nothing) is SONiC's map alone. A DSCP given twice is
// refused: which class it gets would depend on the order of the pairs.
std::string canonical_dscp_map(const Setting& s, std::string_view text) {
  if (text.empty() || lower(text) == "default") return "default";
  std::array<int, 64> class_of{};
  class_of.fill(-1);
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) bad_value(s, text);
    const std::string_view dscp_text = trim(item.substr(0, colon));
    const std::string_view tc_text = trim(item.substr(colon + 1));
    int dscp = -1, tc = -1;
    const auto d = std::from_chars(dscp_text.data(), dscp_text.data() + dscp_text.size(), dscp);
    const auto t = std::from_chars(tc_text.data(), tc_text.data() + tc_text.size(), tc);
    if (d.ec != std::errc() || d.ptr != dscp_text.data() + dscp_text.size() ||
        t.ec != std::errc() || t.ptr != tc_text.data() + tc_text.size() || dscp < 0 || dscp > 63 ||
        tc < 0 || tc > 7 || class_of[static_cast<std::size_t>(dscp)] != -1)
      bad_value(s, text);
    class_of[static_cast<std::size_t>(dscp)] = tc;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  std::string out;
  for (std::size_t dscp = 0; dscp < class_of.size(); ++dscp)
    if (class_of[dscp] != -1)
      out += fmt::format("{}{}:{}", out.empty() ? "" : ",", dscp, class_of[dscp]);
  return out;
}

std::string canonical_choice(const Setting& s, std::string_view text) {
  const std::string wanted = lower(text);
  std::string_view rest = s.choices;
  while (!rest.empty()) {
    const std::size_t bar = rest.find('|');
    if (rest.substr(0, bar) == wanted) return wanted;
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  bad_value(s, text);
}

}  // namespace

std::span<const Setting> catalogue() noexcept {
  return table();
}

const Setting* find(std::string_view name) noexcept {
  for (const Setting& s : table())
    if (s.name == name) return &s;
  return nullptr;
}

std::string_view nearest(std::string_view name) noexcept {
  std::string_view best;
  std::size_t best_distance = 4;  // farther than 3 edits is no suggestion
  for (const Setting& s : table()) {
    const std::size_t d = edit_distance(name, s.name);
    if (d < best_distance) {
      best = s.name;
      best_distance = d;
    }
  }
  if (!best.empty() || name.size() < 4) return best;
  // A name cut short ("switch.ecn_mark" for switch.ecn_mark_mbps) is too far in edits from the
  // whole one, and still plainly meant it.
  for (const Setting& s : table())
    if (std::string_view(s.name).starts_with(name)) return s.name;
  return best;
}

std::string canonical_value(const Setting& s, std::string_view text) {
  const std::string_view t = trim(text);
  switch (s.kind) {
    case ValueKind::number: return canonical_number(s, t);
    case ValueKind::priorities: return canonical_priorities(s, t);
    case ValueKind::choice: return canonical_choice(s, t);
    case ValueKind::dscp_map: return canonical_dscp_map(s, t);
  }
  bad_value(s, text);
}

std::string valid_values(const Setting& s) {
  switch (s.kind) {
    case ValueKind::number:
      return s.unit.empty() ? fmt::format("{}..{}", s.min, s.max)
                            : fmt::format("{}..{} ({})", s.min, s.max, s.unit);
    case ValueKind::priorities: return "priorities 0-7, comma-separated (\"3\", \"3,4\"), or none";
    case ValueKind::choice: {
      std::string out(s.choices);
      std::replace(out.begin(), out.end(), '|', '/');
      return out;
    }
    case ValueKind::dscp_map:
      return "DSCP:CLASS pairs, DSCP 0-63 each once, class 0-7 (\"3:3,46:5\"), or default";
  }
  return {};
}

}  // namespace rocehil::settings
