#include "capture/capture_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

capture::CaptureSummary summary(std::uint64_t captured, std::uint64_t buffer,
                                std::uint64_t interface) {
  capture::CaptureSummary s;
  s.iface = {.name = "veth1",
             .description = "rocehil pcap",
             .bpf_filter = "ether proto 0x8808",
             .speed_bps = 0};
  s.counters = {.captured = captured, .dropped_buffer = buffer, .dropped_interface = interface};
  s.start_ns = 1'000'000'000;
  s.end_ns = 3'500'000'000;
  s.files = {"a-0002.pcapng", "a-0003.pcapng"};
  s.files_deleted = 1;
  return s;
}

TEST(CaptureJson, CoverageIsCapturedOverCapturedPlusDropped) {
  const nlohmann::json j = capture_json(summary(900, 60, 40), {"pcap", "roce", 128});
  EXPECT_EQ(j["frames"], 900);
  EXPECT_EQ(j["dropped"], 100);
  EXPECT_EQ(j["dropped_buffer"], 60);
  EXPECT_EQ(j["dropped_interface"], 40);
  EXPECT_DOUBLE_EQ(j["coverage"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 2.5);
  EXPECT_EQ(j["iface"], "veth1");
  EXPECT_EQ(j["bpf"], "ether proto 0x8808");
  EXPECT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files_deleted"], 1);
  EXPECT_TRUE(j["write_error"].is_null());
}

TEST(CaptureJson, CoverageIsReportedEvenWhenNothingWasLost) {
  const nlohmann::json j = capture_json(summary(0, 0, 0), {"dpdk", "all", 128});
  ASSERT_TRUE(j.contains("coverage"));
  EXPECT_DOUBLE_EQ(j["coverage"].get<double>(), 1.0);
}

TEST(CaptureText, LossIsStatedWithTheFrames) {
  const std::string text = render_capture_text(summary(900, 60, 40), {"pcap", "roce", 128}, 5);
  EXPECT_NE(text.find("900 frames"), std::string::npos) << text;
  EXPECT_NE(text.find("coverage  90.0000%: dropped 60 in the capture buffer, 40 at the interface"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("misses these frames"), std::string::npos) << text;
  EXPECT_NE(text.find("1 older ring files deleted"), std::string::npos) << text;
  const std::string clean = render_capture_text(summary(5, 0, 0), {"pcap", "roce", 128}, 5);
  EXPECT_NE(clean.find("coverage  100.0000%"), std::string::npos) << clean;
  EXPECT_EQ(clean.find("misses"), std::string::npos) << clean;
}

TEST(CaptureText, AFailedWriteIsShouted) {
  capture::CaptureSummary s = summary(5, 0, 0);
  s.write_error = "x.pcapng: writing the capture file failed: No space left on device";
  EXPECT_NE(render_capture_text(s, {"pcap", "all", 128}, 5).find("WRITE FAILED  x.pcapng"),
            std::string::npos);
  EXPECT_EQ(capture_json(s, {"pcap", "all", 128})["write_error"], s.write_error);
}

}  // namespace
}  // namespace rocehil::cli
