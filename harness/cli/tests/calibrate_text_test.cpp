#include "runs/calibrate_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

TEST(CalibrateText, EachRowHasBothEnginesTheirSpreadAndTheRatio) {
  run::CalibrateOptions o;
  o.hosts = {"gpu01", "gpu02"};
  o.rounds = 3;
  run::CalibrationRow bw{.workload = "bw",
                         .size = 65536,
                         .unit = "Gbit/s",
                         .rocehil = {88, 90, 92},
                         .perftest = {92, 92, 92},
                         .rocehil_median = 90,
                         .perftest_median = 92,
                         .ratio = 90.0 / 92,
                         .spread = 4.0 / 90,
                         .outcome = "fail",
                         .detail = "calibration_ratio = 0.978, needs >= 0.99"};
  run::CalibrationRow lat{.workload = "lat",
                          .size = 8,
                          .unit = "us",
                          .rocehil = {},
                          .perftest = {},
                          .rocehil_median = {},
                          .perftest_median = {},
                          .ratio = {},
                          .spread = {},
                          .outcome = "error",
                          .detail = "h2: perftest: ib_send_lat on h2: Did not detect devices"};
  const std::string text = render_calibration(o, {bw, lat});
  EXPECT_NE(text.find("gpu01 -> gpu02, 3 round(s) of each engine"), std::string::npos) << text;
  // The median with half the range of its rounds: 90 +- 2 of 90.
  EXPECT_NE(text.find("90 Gbit/s ±2.2%"), std::string::npos) << text;
  EXPECT_NE(text.find("92 Gbit/s ±0.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("0.978"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("ERROR"), std::string::npos) << text;
  EXPECT_NE(text.find("lat 8: h2: perftest: ib_send_lat on h2: Did not detect devices"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("CPU binding, TX depth, inline, MTU"), std::string::npos) << text;
  EXPECT_EQ(render_calibration(o, {lat}).find("CPU binding"), std::string::npos);
}

}  // namespace
}  // namespace rocehil::cli
