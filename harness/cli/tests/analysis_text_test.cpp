#include "capture/analysis_text.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace rocehil::cli {
namespace {

capture::Analysis sample_analysis() {
  capture::Analysis a;
  a.frames = 1234567;
  a.roce.packets = 1000;
  a.roce.ecn_ce = 10;
  a.roce.by_opcode[0x0a] = 990;
  a.roce.by_opcode[0x81] = 10;
  a.cnp.count = 10;
  a.cnp.by_dest_qp = {{0x101, 7}, {0x202, 3}};
  a.pfc.frames = 2;
  a.pfc.priorities[3] = {.frames = 2,
                         .xoff = 1,
                         .xon = 1,
                         .quanta = 0xffff,
                         .pause_ns = 0xffff * 5.12,
                         .paused_ns = 0,
                         .longest_pause_ns = 0,
                         .pause_fraction = 0,
                         .storms = 0};
  const std::uint8_t ip1[4] = {198, 18, 0, 1}, ip2[4] = {198, 18, 0, 2};
  for (std::uint32_t qp = 1; qp <= 3; ++qp) {
    capture::Flow f;
    f.key = {capture::IpAddress::v4(ip1), capture::IpAddress::v4(ip2), qp};
    f.stats.packets = 10 - qp;
    f.stats.psn_gaps = qp;
    a.flows.push_back(f);
  }
  return a;
}

TEST(AnalysisText, SectionsAndTopLimit) {
  const std::string text =
      render_analysis_text(sample_analysis(), {"x.pcap", "pcap-us", {}, {}}, 2);
  EXPECT_NE(text.find("x.pcap (pcap-us): 1,234,567 frames"), std::string::npos) << text;
  EXPECT_NE(text.find("CNPs: 10 to 2 QPs"), std::string::npos) << text;
  EXPECT_NE(text.find("0x000101 (257)"), std::string::npos) << text;
  EXPECT_NE(text.find("0x0a RC_RDMA_WRITE_ONLY"), std::string::npos) << text;
  EXPECT_NE(text.find("336 us"), std::string::npos) << text;  // 0xffff quanta at 100G
  EXPECT_NE(text.find("0x000002 (2)"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x000003 (3)"), std::string::npos) << "only the top 2 flows: " << text;
  EXPECT_NE(text.find("all flows: PSN gaps 6"), std::string::npos) << text;
}

// A capture of 10 s in which priority 3 was held for 2.5 s (one storm of 2 s still going at the
// end) and the link was PAUSEd for 1 s.
capture::Analysis stormy() {
  capture::Analysis a = sample_analysis();
  a.window_start_ns = 1'000'000'000;
  a.window_end_ns = 11'000'000'000;
  capture::PfcPriority& p3 = a.pfc.priorities[3];
  p3.paused_ns = 2.5e9;
  p3.longest_pause_ns = 2e9;
  p3.pause_fraction = 0.25;
  p3.storms = 1;
  a.pause_8023x.frames = 4;
  a.pause_8023x.paused_ns = 1e9;
  a.pause_8023x.longest_pause_ns = 1e9;
  a.pause_8023x.pause_fraction = 0.1;
  a.pause_8023x.storms = 1;
  a.pfc.storms = {{.priority = 8,
                   .source_mac = {0x02, 0, 0, 0, 0, 0x5b},
                   .start_ns = 2'000'000'000,
                   .end_ns = 3'000'000'000,
                   .duration_ns = 1e9,
                   .ongoing = false,
                   .from_spine = true},
                  {.priority = 3,
                   .source_mac = {0x0c, 0x42, 0xa1, 0, 0, 0x01},
                   .start_ns = 9'000'000'000,
                   .end_ns = 11'000'000'000,
                   .duration_ns = 2e9,
                   .ongoing = true,
                   .from_spine = false}};
  return a;
}

// The cells of the table row whose first cell is `first`, in the paragraph starting `title`.
std::vector<std::string> row(const std::string& text, const std::string& title,
                             const std::string& first) {
  const std::size_t at = text.find("\n" + title);
  const std::size_t end = text.find("\n\n", at + 1);
  std::istringstream lines(text.substr(at, end - at));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> cells;
    for (std::string w; words >> w;) cells.push_back(w);
    if (!cells.empty() && cells[0] == first) return cells;
  }
  return {};
}

TEST(AnalysisText, PfcTableHasPausedTimeLongestShareAndStorms) {
  const std::string text = render_analysis_text(stormy(), {"x.pcap", "pcap-ns", {}, {}}, 10);
  // priority, frames, XOFF, XON, quanta, requested (2 words), paused, longest, %, storms
  EXPECT_EQ(row(text, "PFC", "3"),
            (std::vector<std::string>{"3", "2", "1", "1", "65,535", "336", "us", "2.500", "s",
                                      "2.000", "s", "25.00%", "1"}))
      << text;
  EXPECT_EQ(row(text, "PFC", "0"), (std::vector<std::string>{"0", "0", "0", "0", "0", "0", "ns",
                                                             "0", "ns", "0", "ns", "0.00%", "0"}))
      << text;
  EXPECT_NE(text.find("paused 1.000 s (10.00%), longest 1.000 s, 1 storms"), std::string::npos)
      << text;
  EXPECT_NE(text.find("Observed for 10.000 s"), std::string::npos) << text;
  EXPECT_EQ(text.find("From spine"), std::string::npos) << "direction unknown: " << text;
  // Two durations, each saying what it spans, so they never read as one number said twice.
  EXPECT_NE(text.find(" from the first frame to the last\n"), std::string::npos) << text;
  const capture::Analysis a = stormy();
  const bool window_is_span = a.window_end_ns - a.window_start_ns == a.last_ns - a.first_ns;
  EXPECT_NE(text.find(window_is_span ? "Observed for 10.000 s (the first frame to the last;"
                                     : "Observed for 10.000 s (the capture's start to its stop;"),
            std::string::npos)
      << text;
}

TEST(AnalysisText, StormsAreListedWithSenderStartAndLength) {
  capture::Analysis a = stormy();
  std::string text = render_analysis_text(a, {"x.pcap", "pcap-ns", {}, {}}, 10);
  EXPECT_NE(text.find("Pause storms (continuous pauses longer than 100 ms; start is time into the "
                      "capture): 2"),
            std::string::npos)
      << text;
  EXPECT_EQ(
      row(text, "Pause storms", "802.3x"),
      (std::vector<std::string>{"802.3x", "02:00:00:00:00:5b", "1.000", "s", "1.000", "s", "no"}))
      << text;
  EXPECT_EQ(row(text, "Pause storms", "3"),
            (std::vector<std::string>{"3", "0c:42:a1:00:00:01", "8.000", "s", "2.000", "s", "yes,",
                                      "at", "the", "end"}))
      << text;
  EXPECT_EQ(text.find("from spine"), std::string::npos) << text;

  a.pfc.direction_known = true;
  a.pfc.from_spine = {.frames = 4, .xoff = 3, .paused_ns = 1e9, .storms = 1};
  text = render_analysis_text(a, {"x.pcap", "pcap-ns", {}, {}}, 10);
  EXPECT_NE(text.find("From spine (toward the leaf): 4 PFC/PAUSE frames (3 with XOFF), paused "
                      "1.000 s, 1 storms"),
            std::string::npos)
      << text;
  EXPECT_EQ(row(text, "Pause storms", "802.3x").back(), "yes") << text;
  EXPECT_EQ(row(text, "Pause storms", "3").back(), "no") << text;

  a.pfc.storms.clear();
  text = render_analysis_text(a, {"x.pcap", "pcap-ns", {}, {}}, 10);
  EXPECT_EQ(text.find("Pause storms"), std::string::npos) << "no section without storms";
}

TEST(AnalysisText, ProblemsAreWarnings) {
  const std::string text = render_analysis_text(
      sample_analysis(), {"x.pcap", "pcap-us", {"record 3 at byte 100: cut"}, {}}, 10);
  EXPECT_NE(text.find("warning: record 3 at byte 100: cut"), std::string::npos) << text;
}

}  // namespace
}  // namespace rocehil::cli
