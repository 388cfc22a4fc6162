// Pacing in the agent protocol: setup's and perftest's rate_bps (validated: positive, at most
// 1.6 Tbit/s, only on the side that sends a bw run), the results' pacing report, and how the
// agent chooses between the NIC's limiter and the engine (pacing_setup.hpp).
#include <gtest/gtest.h>

#include <string>

#include "pacing_setup.hpp"
#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

std::string setup_error(const std::string& fields) {
  return parse_request(R"({"v":1,"op":"setup","address":"198.18.0.1",)" + fields + "}").error;
}

TEST(AgentProtocolPacing, SetupCarriesTheRateAndLeavesItOutWhenUnpaced) {
  SetupRequest s;
  s.address = "198.18.0.1";
  s.qps = 4;
  s.rate_bps = 5e8;
  const std::string line = to_json_line(Request{1, s});
  EXPECT_NE(line.find(R"("rate_bps":500000000)"), std::string::npos) << line;
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "") << line;
  EXPECT_EQ(std::get<SetupRequest>(parsed.request->body).rate_bps, 5e8);
  s.rate_bps = 0;
  EXPECT_EQ(to_json_line(Request{1, s}).find("rate_bps"), std::string::npos);
}

TEST(AgentProtocolPacing, SetupRefusesNegativeAbsurdAndMisplacedRates) {
  EXPECT_NE(setup_error(R"("rate_bps":-1)").find("rate_bps"), std::string::npos);
  EXPECT_NE(setup_error(R"("rate_bps":0)").find("rate_bps"), std::string::npos);
  EXPECT_NE(setup_error(R"("rate_bps":2e12)").find("rate_bps"), std::string::npos);
  EXPECT_NE(setup_error(R"("rate_bps":"1G")").find("rate_bps"), std::string::npos);
  EXPECT_EQ(setup_error(R"("rate_bps":1.6e12)"), "");
  EXPECT_EQ(setup_error(R"("workload":"lat","rate_bps":1e9)"),
            "setup: 'rate_bps' paces a bw sender; workload \"lat\" takes none");
  EXPECT_EQ(setup_error(R"("role":"server","rate_bps":1e9)"),
            "setup: 'rate_bps' goes to the side that sends: a one-way bw server only answers; "
            "give it to the client");
  EXPECT_EQ(setup_error(R"("role":"client","bidirectional":true,"rate_bps":1e9)"), "");
}

TEST(AgentProtocolPacing, PerftestCarriesTheRateToItsCommand) {
  PerftestRequest p;
  p.role = Role::client;
  p.tool = "write_bw";
  p.server = "198.18.1.2";
  p.tcp_port = 40000;
  p.seconds = 5;
  p.rate_bps = 2.5e10;
  const ParsedRequest parsed = parse_request(to_json_line(Request{2, p}));
  ASSERT_EQ(parsed.error, "");
  const auto& back = std::get<PerftestRequest>(parsed.request->body);
  EXPECT_EQ(back.rate_bps, 2.5e10);
  EXPECT_EQ(perftest_options(back).rate_gbps, 25);
  // What perftest refuses is refused in the request, with perftest's reason.
  const std::string lat =
      parse_request(
          R"({"v":1,"op":"perftest","role":"client","tool":"write_lat","server":"198.18.1.2",)"
          R"("tcp_port":4000,"rate_bps":1e9})")
          .error;
  EXPECT_NE(lat.find("bandwidth tests only"), std::string::npos) << lat;
  const std::string server =
      parse_request(R"({"v":1,"op":"perftest","role":"server","tool":"write_bw","rate_bps":1e9})")
          .error;
  EXPECT_NE(server.find("goes to the side that sends"), std::string::npos) << server;
  EXPECT_NE(
      parse_request(R"({"v":1,"op":"perftest","role":"server","tool":"write_bw","rate_bps":-3})")
          .error.find("rate_bps"),
      std::string::npos);
}

TEST(AgentProtocolPacing, ResultsCarryHowTheRateWasHeld) {
  ResultsEvent r;
  r.pacing = PacingReport{.method = "engine",
                          .asked_bps = 5e8,
                          .per_qp_bps = 0,
                          .nic_refused = "rxe0: the device has no packet pacing"};
  const std::string line = to_json_line(Reply{3, r});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<ResultsEvent>(parsed.reply->body);
  ASSERT_TRUE(back.pacing);
  EXPECT_EQ(back.pacing->method, "engine");
  EXPECT_EQ(back.pacing->asked_bps, 5e8);
  EXPECT_EQ(back.pacing->nic_refused, "rxe0: the device has no packet pacing");
  // Unpaced results say nothing of pacing.
  EXPECT_EQ(to_json_line(Reply{3, ResultsEvent{}}).find("pacing"), std::string::npos);
  // A NIC that paced names its per-QP rate, and nothing it refused.
  const auto results_error = [](const std::string& pacing) {
    std::string reply = to_json_line(Reply{3, ResultsEvent{}});
    reply.insert(reply.size() - 1, R"(,"pacing":)" + pacing);
    return parse_reply(reply).error;
  };
  EXPECT_EQ(results_error(R"({"method":"nic","asked_bps":1e9,"per_qp_bps":2.5e8})"), "");
  EXPECT_NE(results_error(R"({"method":"nic","asked_bps":1e9})").find("per_qp_bps"),
            std::string::npos);
  EXPECT_NE(results_error(R"({"method":"hw","asked_bps":1e9})").find("method"), std::string::npos);
  EXPECT_NE(results_error(R"({"method":"engine","asked_bps":-1})").find("asked_bps"),
            std::string::npos);
  // The engine's measured holding time goes with the engine, and only with it.
  EXPECT_EQ(results_error(R"({"method":"engine","asked_bps":1e9,"held_s":0.25})"), "");
  EXPECT_NE(results_error(R"({"method":"nic","asked_bps":1e9,"per_qp_bps":1e9,"held_s":1})")
                .find("held_s"),
            std::string::npos);
  EXPECT_NE(results_error(R"({"method":"engine","asked_bps":1e9,"held_s":-1})").find("held_s"),
            std::string::npos);
  EXPECT_EQ(results_error(R"({"method":"engine","asked_bps":1e9,"lost_s":0.5})"), "");
  EXPECT_NE(results_error(R"({"method":"nic","asked_bps":1e9,"per_qp_bps":1e9,"lost_s":1})")
                .find("lost_s"),
            std::string::npos);
  r.pacing->held_s = 0.25;
  const auto held = parse_reply(to_json_line(Reply{3, r}));
  ASSERT_EQ(held.error, "");
  EXPECT_EQ(std::get<ResultsEvent>(held.reply->body).pacing->held_s, 0.25);
}

// A QP whose NIC takes or refuses a limit, recording what it was asked.
class FakeQp final : public traffic::QueuePair {
 public:
  explicit FakeQp(std::string refuse) : refuse_(std::move(refuse)) {}
  std::uint32_t qpn() const override { return 1; }
  traffic::Endpoint local_endpoint() const override { return {}; }
  void connect(const traffic::Endpoint&) override {}
  traffic::PostResult post_send(std::span<const traffic::SendRequest>) override {
    return traffic::PostResult::ok;
  }
  traffic::PostResult post_recv(std::span<const traffic::RecvRequest>) override {
    return traffic::PostResult::ok;
  }
  traffic::QpCounters counters() const override { return {}; }
  std::string limit_rate(double bits_per_s) override {
    limits.push_back(bits_per_s);
    return bits_per_s > 0 ? refuse_ : std::string{};
  }
  std::vector<double> limits;

 private:
  std::string refuse_;
};

std::vector<std::unique_ptr<traffic::QueuePair>> qps(std::initializer_list<const char*> refuse) {
  std::vector<std::unique_ptr<traffic::QueuePair>> out;
  for (const char* r : refuse) out.push_back(std::make_unique<FakeQp>(r));
  return out;
}
const FakeQp& fake(const std::unique_ptr<traffic::QueuePair>& qp) {
  return static_cast<const FakeQp&>(*qp);
}

SetupRequest paced(const char* provider) {
  SetupRequest s;
  s.provider = provider;
  s.rate_bps = 1e9;
  return s;
}

TEST(PaceSender, VerbsAsksTheNicForItsShareOnEveryQp) {
  auto q = qps({"", "", "", ""});
  const auto report = pace_sender(paced("verbs"), q);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->method, "nic");
  EXPECT_EQ(report->per_qp_bps, 2.5e8);
  for (const auto& qp : q) EXPECT_EQ(fake(qp).limits, std::vector<double>{2.5e8});
  EXPECT_EQ(engine_rate_bps(report), 0);
}

TEST(PaceSender, ANicThatRefusesOneQpLiftsTheOthersAndTheEnginePaces) {
  auto q = qps({"", "", "rxe0: the device has no packet pacing", ""});
  const auto report = pace_sender(paced("verbs"), q);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->method, "engine");
  EXPECT_EQ(report->nic_refused, "rxe0: the device has no packet pacing");
  EXPECT_EQ(fake(q[0]).limits, (std::vector<double>{2.5e8, 0}));
  EXPECT_EQ(fake(q[1]).limits, (std::vector<double>{2.5e8, 0}));
  EXPECT_EQ(fake(q[3]).limits, std::vector<double>{});
  EXPECT_EQ(engine_rate_bps(report), 1e9);
}

// The soft NIC has a packet pacer per QP, as a ConnectX: asked the same way.
TEST(PaceSender, SoftAsksItsQpsAsANicIsAsked) {
  auto q = qps({"", ""});
  const auto report = pace_sender(paced("soft"), q);
  ASSERT_TRUE(report);
  EXPECT_EQ(report->method, "nic");
  EXPECT_EQ(report->per_qp_bps, 5e8);
  EXPECT_EQ(fake(q[0]).limits, std::vector<double>{5e8});
  EXPECT_EQ(engine_rate_bps(report), 0);
}

TEST(PaceSender, NothingToPaceWithoutARateOrOnAOneWayServer) {
  auto q = qps({""});
  SetupRequest unpaced = paced("soft");
  unpaced.rate_bps = 0;
  EXPECT_FALSE(pace_sender(unpaced, q));
  SetupRequest server = paced("soft");
  server.role = Role::server;
  EXPECT_FALSE(pace_sender(server, q));
  server.bidirectional = true;
  EXPECT_TRUE(pace_sender(server, q));
}

}  // namespace
}  // namespace rocehil::agent
