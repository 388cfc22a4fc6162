#include "soft/soft_congestion.hpp"

#include <fmt/format.h>

#include <array>
#include <limits>

#include "rocehil/common/error.hpp"
#include "soft/cnp_limiter.hpp"

namespace rocehil::traffic {

namespace soft {
namespace {

constexpr std::int64_t u32_max = std::numeric_limits<std::uint32_t>::max();

// One name the provider takes: its range (the field's, as the settings catalogue gives it) and
// where it goes.
struct Knob {
  std::string_view name;
  std::int64_t min, max;
  void (*set)(SoftCongestion&, std::int64_t);
  std::int64_t (*get)(const SoftCongestion&);
};

std::uint32_t u32(std::int64_t v) {
  return static_cast<std::uint32_t>(v);
}

// The catalogue's names (settings/src/catalogue.cpp) for the fields of DcqcnParameters.
constexpr std::array knobs = {
    // The lists of priorities travel as a bitmask (bit P: priority P), all on unless set, as
    // mlx5 ships.
    Knob{"roce_rp.enable", 0, 255,
         [](SoftCongestion& c, std::int64_t v) { c.rp_priorities = static_cast<std::uint8_t>(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rp_priorities; }},
    Knob{"roce_np.enable", 0, 255,
         [](SoftCongestion& c, std::int64_t v) { c.np_priorities = static_cast<std::uint8_t>(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.np_priorities; }},
    Knob{"roce_rp.clamp_tgt_rate", 0, 1,
         [](SoftCongestion& c, std::int64_t v) { c.rate.clamp_tgt_rate = v != 0; },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.clamp_tgt_rate; }},
    Knob{"roce_rp.clamp_tgt_rate_ati", 0, 1,
         [](SoftCongestion& c, std::int64_t v) { c.rate.clamp_tgt_rate_after_time_inc = v != 0; },
         [](const SoftCongestion& c) -> std::int64_t {
           return c.rate.clamp_tgt_rate_after_time_inc;
         }},
    Knob{"roce_rp.rpg_time_reset", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_time_reset_us = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_time_reset_us; }},
    Knob{"roce_rp.rpg_byte_reset", 0, 32767,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_byte_reset_bytes = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_byte_reset_bytes; }},
    Knob{"roce_rp.rpg_threshold", 0, 31,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_threshold = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_threshold; }},
    Knob{"roce_rp.rpg_ai_rate", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_ai_rate_mbps = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_ai_rate_mbps; }},
    Knob{"roce_rp.rpg_hai_rate", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_hai_rate_mbps = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_hai_rate_mbps; }},
    Knob{"roce_rp.rpg_gd", 0, 15, [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_gd = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_gd; }},
    Knob{"roce_rp.rpg_min_dec_fac", 1, 100,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_min_dec_fac_percent = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_min_dec_fac_percent; }},
    Knob{"roce_rp.rpg_min_rate", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rpg_min_rate_mbps = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.rpg_min_rate_mbps; }},
    Knob{"roce_rp.dce_tcp_g", 0, 1023,
         [](SoftCongestion& c, std::int64_t v) { c.rate.dce_tcp_g = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.dce_tcp_g; }},
    Knob{"roce_rp.dce_tcp_rtt", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.dce_tcp_rtt_us = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.dce_tcp_rtt_us; }},
    Knob{"roce_rp.rate_reduce_monitor_period", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) { c.rate.rate_reduce_monitor_period_us = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t {
           return c.rate.rate_reduce_monitor_period_us;
         }},
    Knob{"roce_rp.initial_alpha_value", 0, 1023,
         [](SoftCongestion& c, std::int64_t v) { c.rate.initial_alpha_value = u32(v); },
         [](const SoftCongestion& c) -> std::int64_t { return c.rate.initial_alpha_value; }},
    Knob{"roce_np.min_time_between_cnps", 0, u32_max,
         [](SoftCongestion& c, std::int64_t v) {
           c.cnp_interval_ns = static_cast<std::uint64_t>(v) * 1000;
         },
         [](const SoftCongestion& c) -> std::int64_t {
           return static_cast<std::int64_t>(c.cnp_interval_ns / 1000);
         }},
    Knob{"roce_np.cnp_dscp", 0, 63,
         [](SoftCongestion& c, std::int64_t v) {
           c.cnp_traffic_class = static_cast<std::uint8_t>(v << 2);
         },
         [](const SoftCongestion& c) -> std::int64_t { return c.cnp_traffic_class >> 2; }},
};

SoftCongestion defaults() {
  SoftCongestion c;
  // The soft provider has no line rate of its own: start unlimited at a rate no veth reaches, so
  // only CNPs bring it down.
  c.rate.line_rate_mbps = 100'000;
  c.cnp_interval_ns = CnpLimiter::default_interval_ns;
  c.cnp_traffic_class = 48 << 2;  // CNP_DSCP 48, as ConnectX sends them
  return c;
}

}  // namespace

SoftCongestion congestion_from(std::span<const SoftSetting> settings) {
  SoftCongestion c = defaults();
  for (const SoftSetting& s : settings) {
    const Knob* knob = nullptr;
    for (const Knob& k : knobs)
      if (k.name == s.name) knob = &k;
    if (knob == nullptr)
      throw input_error(fmt::format(
          "soft provider: '{}' is not a setting it takes (`rocehil settings list` marks those "
          "it does 'soft')",
          s.name));
    if (s.value < knob->min || s.value > knob->max)
      throw input_error(fmt::format("soft provider: {} = {} is out of range; it takes {}..{}",
                                    s.name, s.value, knob->min, knob->max));
    knob->set(c, s.value);
  }
  if (const std::string_view why = c.rate.invalid_reason(); !why.empty())
    throw input_error(
        fmt::format("soft provider: these DCQCN settings cannot work together: {}", why));
  return c;
}

}  // namespace soft

std::vector<SoftSetting> soft_setting_defaults() {
  const soft::SoftCongestion c = soft::defaults();
  std::vector<SoftSetting> out;
  for (const soft::Knob& k : soft::knobs) out.push_back({std::string(k.name), k.get(c)});
  return out;
}

bool soft_setting_is_priorities(std::string_view name) {
  return name == "roce_rp.enable" || name == "roce_np.enable";
}

void check_soft_settings(std::span<const SoftSetting> settings) {
  (void)soft::congestion_from(settings);
}

}  // namespace rocehil::traffic
