#include "rocehil/capture/analysis_json.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "addresses.hpp"
#include "no_more_threads.hpp"

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
  a.roce.by_dscp[26] = {.packets = 5, .bytes = 5000, .ecn_ce = 2, .acks = 0};
  a.roce.by_dscp[48] = {.packets = 2, .bytes = 136, .cnps = 2};
  a.cnp.count = 2;
  a.cnp.by_dest_qp = {{257, 2}};
  a.pfc.frames = 1;
  a.pfc.priorities[3] = PfcPriority{.frames = 1,
                                    .xoff = 1,
                                    .xon = 0,
                                    .quanta = 10,
                                    .pause_ns = 51.2,
                                    .paused_ns = 40.5,
                                    .longest_pause_ns = 30.25,
                                    .pause_fraction = 0.125,
                                    .storms = 1};
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
  // Only the classes that carried packets, keyed by the DSCP in decimal.
  ASSERT_EQ(j["by_dscp"].size(), 2u);
  EXPECT_EQ(j["by_dscp"]["26"], (nlohmann::json{{"packets", 5},
                                                {"bytes", 5000},
                                                {"ecn_ce", 2},
                                                {"cnps", 0},
                                                {"acks", 0},
                                                {"naks", 0},
                                                {"rnr_naks", 0}}));
  EXPECT_EQ(j["by_dscp"]["48"]["cnps"], 2);
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
  for (const char* key : {"packets", "bytes", "ecn_ce", "psn_gaps", "retransmits", "naks",
                          "first_ns", "last_ns", "udp_sport"})
    EXPECT_TRUE(f.contains(key)) << key;
  EXPECT_EQ(j["timeline"]["bin_ms"], 10);
  // Bin 0 is empty and left out; bin 1 keeps its time.
  ASSERT_EQ(j["timeline"]["bins"].size(), 1u);
  EXPECT_EQ(j["timeline"]["bins"][0]["t_ms"], 10);
  EXPECT_EQ(j["timeline"]["bins"][0]["cnp"], 2);
  for (const char* key : {"roce_bytes", "pfc_xoff", "ecn_ce"})
    EXPECT_EQ(j["timeline"]["bins"][0][key], 0) << key;
}

TEST(AnalysisJson, PauseAccountingStormsWindowAndOptions) {
  Analysis a = sample();
  a.options.storm_ms = 50;
  a.options.direction = MirrorDirection::spine_to_leaf;
  a.options.spine_macs = {MacAddress{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x0f}};
  a.window_start_ns = 1000;
  a.window_end_ns = 9000;
  a.pfc.storms.push_back({.priority = 3,
                          .source_mac = {0x02, 0, 0, 0, 0xab, 0x10},
                          .start_ns = 1'700'000'000'000'000'123ull,
                          .end_ns = 1'700'000'000'200'000'123ull,
                          .duration_ns = 200'000'000.4,
                          .ongoing = true,
                          .from_spine = true});
  a.pfc.storms.push_back({.priority = 8,
                          .source_mac = {},
                          .start_ns = 5,
                          .end_ns = 6,
                          .duration_ns = 1,
                          .ongoing = false,
                          .from_spine = false});
  a.pfc.direction_known = true;
  a.pfc.from_spine = {.frames = 4, .xoff = 3, .paused_ns = 12.5, .storms = 1};
  a.pause_8023x = {.frames = 2,
                   .xoff = 1,
                   .quanta = 100,
                   .pause_ns = 512,
                   .paused_ns = 256.5,
                   .longest_pause_ns = 200.25,
                   .pause_fraction = 0.5,
                   .storms = 2};
  const nlohmann::json j = nlohmann::json::parse(to_json_text(a));
  const auto& p3 = j["pfc"]["priorities"][3];
  EXPECT_DOUBLE_EQ(p3["paused_ns"].get<double>(), 40.5);
  EXPECT_DOUBLE_EQ(p3["longest_pause_ns"].get<double>(), 30.25);
  EXPECT_DOUBLE_EQ(p3["pause_fraction"].get<double>(), 0.125);
  EXPECT_EQ(p3["storms"], 1);
  EXPECT_EQ(j["pfc"]["priorities"][0]["paused_ns"], 0);
  ASSERT_EQ(j["pfc"]["storms"].size(), 2u);
  const auto& s = j["pfc"]["storms"][0];
  EXPECT_EQ(s["priority"], 3);
  EXPECT_EQ(s["source_mac"], "02:00:00:00:ab:10");
  EXPECT_EQ(s["start_ns"].get<std::uint64_t>(), 1'700'000'000'000'000'123ull);  // exact
  EXPECT_EQ(s["end_ns"].get<std::uint64_t>(), 1'700'000'000'200'000'123ull);
  EXPECT_DOUBLE_EQ(s["duration_ns"].get<double>(), 200'000'000.4);
  EXPECT_EQ(s["ongoing"], true);
  EXPECT_EQ(s["from_spine"], true);
  EXPECT_EQ(j["pfc"]["storms"][1]["priority"], 8);
  EXPECT_EQ(j["pfc"]["storms"][1]["source_mac"], "00:00:00:00:00:00");
  EXPECT_EQ(j["pfc"]["direction_known"], true);
  EXPECT_EQ(j["pfc"]["from_spine"],
            (nlohmann::json{{"frames", 4}, {"xoff", 3}, {"paused_ns", 12.5}, {"storms", 1}}));
  const auto& pause = j["pause_8023x"];
  EXPECT_DOUBLE_EQ(pause["paused_ns"].get<double>(), 256.5);
  EXPECT_DOUBLE_EQ(pause["longest_pause_ns"].get<double>(), 200.25);
  EXPECT_DOUBLE_EQ(pause["pause_fraction"].get<double>(), 0.5);
  EXPECT_EQ(pause["storms"], 2);
  EXPECT_EQ(j["window"], (nlohmann::json{{"start_ns", 1000}, {"end_ns", 9000}}));
  EXPECT_EQ(j["options"]["storm_ms"], 50.0);
  EXPECT_EQ(j["options"]["direction"], "spine-to-leaf");
  EXPECT_EQ(j["options"]["spine_macs"], (nlohmann::json{"aa:bb:cc:dd:ee:0f"}));
  EXPECT_EQ(j["options"]["link_gbps"], 100.0);
  EXPECT_EQ(j["link_gbps"], 100.0);  // kept where schema 1 had it
}

TEST(AnalysisJson, FromSpineIsNullWhenNobodySaidWhichWayTheLinkRuns) {
  const nlohmann::json j = nlohmann::json::parse(to_json_text(sample()));
  EXPECT_TRUE(j["pfc"]["from_spine"].is_null());
  EXPECT_EQ(j["pfc"]["direction_known"], false);
  EXPECT_TRUE(j["pfc"]["storms"].is_array());
  EXPECT_TRUE(j["pfc"]["storms"].empty());
  EXPECT_EQ(j["options"]["direction"], "unknown");
  EXPECT_EQ(j["options"]["storm_ms"], 100.0);
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

namespace rocehil::capture {
namespace {

std::string written(const Analysis& a, std::size_t max_flows, unsigned threads) {
  std::string text;
  std::size_t pieces = 0;
  write_json(
      a,
      [&](std::string_view piece) {
        text.append(piece);
        ++pieces;
      },
      max_flows, nlohmann::json::object(), threads);
  EXPECT_GT(pieces, 0u);
  return text;
}

TEST(AnalysisJson, ThreadsFormatTheSameTextAsOne) {
  // More flows than several rounds of 4096-flow blocks on 3 threads, with a partial last round
  // and numbers of every width; caps inside a block, on a block's edge and past the end.
  Analysis a = sample();
  a.flows.clear();
  for (std::uint32_t i = 0; i < 30'001; ++i) {
    Flow f;
    f.key = {
        testing::v4(198, 18, static_cast<std::uint8_t>(i >> 8), i & 0xff),
        i % 7 == 0 ? testing::doc_v6(static_cast<std::uint8_t>(i)) : testing::v4(198, 19, 0, 1),
        i * 2654435761u >> 8};
    f.stats = {i,
               std::uint64_t{i} * 1'000'003,
               i % 3,
               i % 5,
               i % 11,
               i % 13,
               1'700'000'000'000'000'000ull + i,
               1'800'000'000'000'000'000ull - i,
               static_cast<std::uint16_t>(i * 7)};
    a.flows.push_back(f);
  }
  for (const std::size_t cap : {std::size_t{0}, std::size_t{1}, std::size_t{8192},
                                std::size_t{8193}, std::size_t{12289}, SIZE_MAX}) {
    const std::string one = written(a, cap, 1);
    for (const unsigned threads : {2u, 3u, 8u}) {
      SCOPED_TRACE(::testing::Message() << "cap " << cap << ", " << threads << " threads");
      EXPECT_EQ(written(a, cap, threads), one);
    }
  }
  const nlohmann::json j = nlohmann::json::parse(written(a, SIZE_MAX, 3));
  ASSERT_EQ(j["flows"].size(), 30'001u);
  EXPECT_EQ(j["flows"][30'000]["packets"], 30'000);

  // Asked for threads where none can be started, the calling thread formats every block.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to become a user held to a thread limit";
  const std::string one = written(a, SIZE_MAX, 1);
  EXPECT_EXIT(
      {
        testing::no_more_threads();
        std::_Exit(written(a, SIZE_MAX, 3) == one ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace rocehil::capture
