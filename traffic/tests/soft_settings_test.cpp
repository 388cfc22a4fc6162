// The soft provider's congestion settings by ConnectX's names: what each name changes, and the
// names and values it refuses.
#include <gtest/gtest.h>

#include <set>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/soft_settings.hpp"
#include "soft/soft_congestion.hpp"

namespace rocehil::traffic {
namespace {

using soft::congestion_from;

TEST(SoftSettings, DefaultsAreWhatTheProviderUsesWhenNothingIsGiven) {
  const std::vector<SoftSetting> defaults = soft_setting_defaults();
  EXPECT_EQ(defaults.size(), 18u);
  std::set<std::string> names;
  for (const SoftSetting& s : defaults) names.insert(s.name);
  EXPECT_EQ(names.size(), defaults.size()) << "a name listed twice";
  const soft::SoftCongestion none = congestion_from({}), all = congestion_from(defaults);
  EXPECT_EQ(all.rate.rpg_time_reset_us, none.rate.rpg_time_reset_us);
  EXPECT_EQ(all.rate.dce_tcp_rtt_us, none.rate.dce_tcp_rtt_us);
  EXPECT_EQ(all.rate.clamp_tgt_rate_after_time_inc, none.rate.clamp_tgt_rate_after_time_inc);
  EXPECT_EQ(all.cnp_interval_ns, none.cnp_interval_ns);
  EXPECT_EQ(all.cnp_traffic_class, 48 << 2);
  EXPECT_EQ(none.rate.line_rate_mbps, 100'000.0);
  // DCQCN on every priority, as mlx5 ships.
  EXPECT_EQ(none.rp_priorities, 0xff);
  EXPECT_EQ(none.np_priorities, 0xff);
}

TEST(SoftSettings, EachNameReachesItsField) {
  const std::vector<SoftSetting> given = {{"roce_rp.rpg_time_reset", 55},
                                          {"roce_rp.rpg_byte_reset", 1000},
                                          {"roce_rp.rpg_threshold", 5},
                                          {"roce_rp.rpg_ai_rate", 40},
                                          {"roce_rp.rpg_hai_rate", 400},
                                          {"roce_rp.rpg_gd", 9},
                                          {"roce_rp.rpg_min_dec_fac", 20},
                                          {"roce_rp.rpg_min_rate", 7},
                                          {"roce_rp.dce_tcp_g", 4},
                                          {"roce_rp.dce_tcp_rtt", 60},
                                          {"roce_rp.clamp_tgt_rate", 1},
                                          {"roce_rp.clamp_tgt_rate_ati", 0},
                                          {"roce_rp.initial_alpha_value", 512},
                                          {"roce_rp.rate_reduce_monitor_period", 9},
                                          {"roce_np.min_time_between_cnps", 50},
                                          {"roce_np.cnp_dscp", 26},
                                          {"roce_rp.enable", 0x18},
                                          {"roce_np.enable", 0}};
  const soft::SoftCongestion c = congestion_from(given);
  EXPECT_EQ(c.rate.rpg_time_reset_us, 55u);
  EXPECT_EQ(c.rate.rpg_byte_reset_bytes, 1000u);
  EXPECT_EQ(c.rate.rpg_threshold, 5u);
  EXPECT_EQ(c.rate.rpg_ai_rate_mbps, 40u);
  EXPECT_EQ(c.rate.rpg_hai_rate_mbps, 400u);
  EXPECT_EQ(c.rate.rpg_gd, 9u);
  EXPECT_EQ(c.rate.rpg_min_dec_fac_percent, 20u);
  EXPECT_EQ(c.rate.rpg_min_rate_mbps, 7u);
  EXPECT_EQ(c.rate.dce_tcp_g, 4u);
  EXPECT_EQ(c.rate.dce_tcp_rtt_us, 60u);
  EXPECT_TRUE(c.rate.clamp_tgt_rate);
  EXPECT_FALSE(c.rate.clamp_tgt_rate_after_time_inc);
  EXPECT_EQ(c.rate.initial_alpha_value, 512u);
  EXPECT_EQ(c.rate.rate_reduce_monitor_period_us, 9u);
  EXPECT_EQ(c.cnp_interval_ns, 50'000u);
  EXPECT_EQ(c.cnp_traffic_class, 26 << 2);
  EXPECT_EQ(c.rp_priorities, 0x18);
  EXPECT_EQ(c.np_priorities, 0);
  EXPECT_TRUE(soft_setting_is_priorities("roce_np.enable"));
  EXPECT_FALSE(soft_setting_is_priorities("roce_np.cnp_dscp"));
  EXPECT_EQ(given.size(), soft_setting_defaults().size()) << "a name this test does not cover";
}

TEST(SoftSettings, RefusesNamesItDoesNotTakeAndValuesOutOfRange) {
  const auto message = [](std::vector<SoftSetting> s) {
    try {
      check_soft_settings(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({{"roce_np.enable_all", 8}}).find("'roce_np.enable_all' is not a setting"),
            std::string::npos);
  EXPECT_NE(message({{"roce_rp.enable", 256}}).find("roce_rp.enable = 256 is out of range"),
            std::string::npos);
  EXPECT_NE(message({{"roce_rp.rpg_gd", 16}}).find("roce_rp.rpg_gd = 16 is out of range"),
            std::string::npos);
  EXPECT_NE(message({{"roce_rp.rpg_min_dec_fac", 0}}).find("1..100"), std::string::npos);
  EXPECT_NE(message({{"roce_np.cnp_dscp", -1}}).find("0..63"), std::string::npos);
  EXPECT_EQ(message({{"roce_np.cnp_dscp", 63}}), "accepted");
}

}  // namespace
}  // namespace rocehil::traffic
