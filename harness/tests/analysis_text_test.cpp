#include "rocehil/harness/analysis_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::harness {
namespace {

capture::Analysis sample() {
  capture::Analysis a;
  a.frames = 1234567;
  a.roce.packets = 1000;
  a.roce.ecn_ce = 10;
  a.roce.by_opcode[0x0a] = 990;
  a.roce.by_opcode[0x81] = 10;
  a.cnp.count = 10;
  a.cnp.by_dest_qp = {{0x101, 7}, {0x202, 3}};
  a.pfc.frames = 2;
  a.pfc.priorities[3] = {2, 1, 1, 0xffff, 0xffff * 5.12};
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
  const std::string text = render_analysis_text(sample(), {"x.pcap", "pcap-us", {}}, 2);
  EXPECT_NE(text.find("x.pcap (pcap-us): 1,234,567 frames"), std::string::npos) << text;
  EXPECT_NE(text.find("CNPs: 10 to 2 QPs"), std::string::npos) << text;
  EXPECT_NE(text.find("0x000101 (257)"), std::string::npos) << text;
  EXPECT_NE(text.find("0x0a RC_RDMA_WRITE_ONLY"), std::string::npos) << text;
  EXPECT_NE(text.find("336 us"), std::string::npos) << text;  // 0xffff quanta at 100G
  EXPECT_NE(text.find("0x000002 (2)"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x000003 (3)"), std::string::npos) << "only the top 2 flows: " << text;
  EXPECT_NE(text.find("all flows: PSN gaps 6"), std::string::npos) << text;
}

TEST(AnalysisText, ProblemsAreWarnings) {
  const std::string text =
      render_analysis_text(sample(), {"x.pcap", "pcap-us", {"record 3 at byte 100: cut"}}, 10);
  EXPECT_NE(text.find("warning: record 3 at byte 100: cut"), std::string::npos) << text;
}

TEST(GroupDigits, Thousands) {
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(17031), "17,031");
  EXPECT_EQ(group_digits(12345678), "12,345,678");
  EXPECT_EQ(group_digits(123456789), "123,456,789");
}

}  // namespace
}  // namespace rocehil::harness
