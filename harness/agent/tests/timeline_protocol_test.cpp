// A sender's timeline in the results: its completed bytes sampled over the work, validated as
// the controller reads it (as many times as counts, neither going back, at most 8,192 samples).
#include <gtest/gtest.h>

#include <string>

#include "progress_sampler.hpp"
#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

std::string results_error(const std::string& timeline) {
  std::string line = to_json_line(Reply{3, ResultsEvent{}});
  line.insert(line.size() - 1, R"(,"timeline":)" + timeline);
  return parse_reply(line).error;
}

// A QP's longest wait for a completion travels with its results; a QP without one says nothing.
TEST(AgentProtocolTimeline, AQpsLongestStallTravelsWithItAndIsAbsentWhereNotMeasured) {
  ResultsEvent r;
  r.per_qp.resize(2);
  r.per_qp[0].qpn = 0x1a3;
  r.per_qp[0].stall_us = 4'300'000;
  r.per_qp[0].stall_from_us = 2'010'000;
  r.per_qp[1].qpn = 0x1a4;
  const std::string line = to_json_line(Reply{3, r});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<ResultsEvent>(parsed.reply->body);
  EXPECT_EQ(back.per_qp[0].stall_us, 4'300'000u);
  EXPECT_EQ(back.per_qp[0].stall_from_us, 2'010'000u);
  EXPECT_FALSE(back.per_qp[1].stall_us);
  EXPECT_EQ(line.find("stall_us"), line.rfind("stall_us")) << line;  // the first QP's only
}

TEST(AgentProtocolTimeline, ResultsCarryTheTimelineAndOnlyOneThatCanBe) {
  ResultsEvent r;
  r.timeline = ProgressTimeline{.start_ns = 1'700'000'000'000'000'000,
                                .period_us = 10'000,
                                .t_us = {0, 10'004, 20'011},
                                .bytes = {0, 65'536, 65'536}};
  const std::string line = to_json_line(Reply{3, r});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<ResultsEvent>(parsed.reply->body);
  ASSERT_TRUE(back.timeline);
  EXPECT_EQ(back.timeline->t_us, r.timeline->t_us);
  EXPECT_EQ(back.timeline->bytes, r.timeline->bytes);
  EXPECT_EQ(back.timeline->start_ns, r.timeline->start_ns);
  EXPECT_EQ(to_json_line(Reply{3, ResultsEvent{}}).find("timeline"), std::string::npos);
  EXPECT_EQ(results_error(R"({"start_ns":1,"period_us":10000,"t_us":[0,5],"bytes":[0]})"),
            "results: timeline has 2 times for 1 byte counts");
  EXPECT_NE(results_error(R"({"start_ns":1,"period_us":10000,"t_us":[0,5],"bytes":[9,3]})")
                .find("completed bytes only grow"),
            std::string::npos);
  EXPECT_NE(results_error(R"({"start_ns":1,"period_us":10000,"t_us":[7,5],"bytes":[0,3]})")
                .find("goes back at sample 1"),
            std::string::npos);
  EXPECT_NE(results_error(R"({"start_ns":1,"period_us":0,"t_us":[],"bytes":[]})").find("period_us"),
            std::string::npos);
}

// The sampler keeps at most its capacity: a long run halves its samples and doubles the period,
// so a timeline of hours still fits one results line, and the last sample is the latest.
TEST(ProgressSampler, KeepsEverySampleUntilFullThenHalvesThem) {
  ProgressSampler s(8);
  s.begin(1000, 10'000);
  for (std::uint64_t i = 0; i < 8; ++i) s.add(i * 10'000, i * 100);
  EXPECT_EQ(s.timeline().t_us.size(), 8u);
  EXPECT_EQ(s.timeline().period_us, 10'000u);
  s.add(80'000, 800);
  const ProgressTimeline& t = s.timeline();
  EXPECT_EQ(t.period_us, 20'000u);
  EXPECT_EQ(t.t_us, (std::vector<std::uint64_t>{0, 20'000, 40'000, 60'000, 80'000}));
  EXPECT_EQ(t.bytes, (std::vector<std::uint64_t>{0, 200, 400, 600, 800}));
  EXPECT_EQ(t.start_ns, 1000);
  // A sample sooner than the period after the last (a late tick catching up) is not kept, so the
  // halved series keeps its spacing.
  s.add(81'000, 810);
  EXPECT_EQ(s.timeline().t_us.back(), 80'000u);
}

}  // namespace
}  // namespace rocehil::agent
