#include "rocehil/capture/analysis_json.hpp"

#include <gtest/gtest.h>

#include "addresses.hpp"

namespace rocehil::capture {
namespace {

Analysis sample() {
  Analysis a;
  a.options.link_gbps = 100;
  a.frames = 10;
  a.roce.packets = 7;
  a.roce.malformed = 1;
  a.roce.ecn_ce = 2;
  a.roce.by_opcode[0x0a] = 5;
  a.roce.by_opcode[0x81] = 2;
  a.roce.by_opcode[0x1f] = 0;
  a.cnp.count = 2;
  a.cnp.by_dest_qp = {{257, 2}};
  a.pfc.frames = 1;
  a.pfc.priorities[3] = PfcPriority{1, 1, 0, 10, 51.2};
  a.pause_8023x.frames = 1;
  const std::uint8_t ip1[4] = {198, 18, 0, 1}, ip2[4] = {198, 18, 0, 2};
  for (std::uint32_t qp : {257u, 258u, 259u}) {
    Flow f;
    f.key = {IpAddress::v4(ip1), IpAddress::v4(ip2), qp};
    f.stats.packets = qp;
    a.flows.push_back(f);
  }
  a.timeline.bin_ms = 10;
  a.timeline.bins.resize(2);
  a.timeline.bins[1].cnp = 2;
  return a;
}

TEST(AnalysisJson, TheShapeTheIssueAsksFor) {
  const nlohmann::json j = nlohmann::json::parse(to_json_text(sample()));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["frames"], 10);
  EXPECT_EQ(j["roce"]["packets"], 7);
  EXPECT_EQ(j["roce"]["malformed"], 1);
  EXPECT_EQ(j["roce"]["ecn_ce"], 2);
  EXPECT_EQ(j["roce"]["by_opcode"]["RC_RDMA_WRITE_ONLY"], 5);
  EXPECT_EQ(j["roce"]["by_opcode"]["CNP"], 2);
  EXPECT_EQ(j["roce"]["by_opcode"].size(), 2u);
  EXPECT_EQ(j["cnp"]["count"], 2);
  EXPECT_EQ(j["cnp"]["by_dest_qp"]["257"], 2);  // decimal QP as the key
  ASSERT_EQ(j["pfc"]["priorities"].size(), 8u);
  const auto& p3 = j["pfc"]["priorities"][3];
  EXPECT_EQ(p3["priority"], 3);
  EXPECT_EQ(p3["frames"], 1);
  EXPECT_EQ(p3["xoff"], 1);
  EXPECT_EQ(p3["xon"], 0);
  EXPECT_EQ(p3["quanta"], 10);
  EXPECT_DOUBLE_EQ(p3["pause_ns"].get<double>(), 51.2);
  EXPECT_EQ(j["pause_8023x"]["frames"], 1);
  ASSERT_EQ(j["flows"].size(), 3u);
  const auto& f = j["flows"][0];
  EXPECT_EQ(f["src"], "198.18.0.1");
  EXPECT_EQ(f["dst"], "198.18.0.2");
  EXPECT_EQ(f["dest_qp"], 257);
  for (const char* key :
       {"packets", "bytes", "ecn_ce", "psn_gaps", "retransmits", "naks", "first_ns", "last_ns"})
    EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_EQ(j["timeline"]["bin_ms"], 10);
  // Bin 0 is empty and left out; bin 1 keeps its time.
  ASSERT_EQ(j["timeline"]["bins"].size(), 1u);
  EXPECT_EQ(j["timeline"]["bins"][0]["t_ms"], 10);
  EXPECT_EQ(j["timeline"]["bins"][0]["cnp"], 2);
  for (const char* key : {"roce_bytes", "pfc_xoff", "ecn_ce"})
    EXPECT_EQ(j["timeline"]["bins"][0][key], 0) << key;
}

TEST(AnalysisJson, FlowCapKeepsTheTotalVisible) {
  const nlohmann::json j = nlohmann::json::parse(to_json_text(sample(), 2));
  EXPECT_EQ(j["flows"].size(), 2u);
  EXPECT_EQ(j["flow_count"], 3);
}

}  // namespace
}  // namespace rocehil::capture

namespace rocehil::capture {
namespace {

TEST(AnalysisJson, ExtraMembersAndAnEmptyAnalysisParse) {
  const nlohmann::json j = nlohmann::json::parse(
      to_json_text(Analysis{}, SIZE_MAX, {{"file", {{"path", "a \"b\".pcap"}}}}));
  EXPECT_EQ(j["file"]["path"], "a \"b\".pcap");
  EXPECT_TRUE(j["flows"].empty());
  EXPECT_TRUE(j["timeline"]["bins"].empty());
  EXPECT_EQ(j["flow_count"], 0);
}

TEST(AnalysisJson, Ipv6FlowAddresses) {
  Analysis a;
  a.flows.push_back({{testing::doc_v6(1), testing::doc_v6(1), 7}, {}});
  const nlohmann::json j = nlohmann::json::parse(to_json_text(a));
  EXPECT_EQ(j["flows"][0]["src"], "2001:db8::1");
}

}  // namespace
}  // namespace rocehil::capture
