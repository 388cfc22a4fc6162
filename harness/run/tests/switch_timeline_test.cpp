// A failover as the switches' ports saw it, polled every 100 ms, built by hand: which links
// carried the traffic before, during and after the event, and the fabric's recovery time, each
// worked out from the samples.
#include "rocehil/run/switch_timeline.hpp"

#include <gtest/gtest.h>

#include <map>

#include "switch_fabric.hpp"

namespace rocehil::run {
namespace {

constexpr std::int64_t poll_start = 1'800'000'000'000'000'000;
constexpr std::int64_t one_ms = 1'000'000;

constexpr double full_100ms = 1'250'000;  // bytes per 100 ms: 100 Mbit/s
constexpr double acks_100ms = 12'500;     // 1 Mbit/s back to h1

// h1 -> h2 at 100 Mbit/s over l1-s1 until l1-s1 goes down at 2.05 s (half of the interval from
// 2.0 s), nothing delivered until 2.5 s, then over l1-s2. Bytes each port sent in the interval
// ending at poll k (every 100 ms from poll_start).
double sent_in(const std::string& port, int k) {
  const bool before = k <= 20, cut = k == 21, rerouted = k > 25;
  if (port == "l1:swp51" || port == "s1:swp2")
    return before ? full_100ms : cut ? full_100ms / 2 : 0;
  if (port == "l1:swp52" || port == "s2:swp2") return rerouted ? full_100ms : 0;
  if (port == "l2:swp1") return before || rerouted ? full_100ms : cut ? full_100ms / 2 : 0;
  if (port == "l2:swp51" || port == "s1:swp1" || port == "l1:swp1") return acks_100ms;
  if (port == "s2:swp1") return 100;  // LLDP and the like: 4 KB over the case, 0.01%
  return 0;
}

std::vector<SwitchSample> failover(int polls = 41) {
  const std::map<std::string, std::vector<std::string>> ports = {{"l1", {"swp1", "swp51", "swp52"}},
                                                                 {"l2", {"swp1", "swp51", "swp52"}},
                                                                 {"s1", {"swp1", "swp2"}},
                                                                 {"s2", {"swp1", "swp2"}}};
  std::map<std::string, double> total;
  std::vector<SwitchSample> samples;
  for (int k = 0; k < polls; ++k) {
    SwitchSample sample;
    for (const auto& [name, names] : ports) {
      switches::SwitchSnapshot s;
      s.switch_name = name;
      s.unix_ns =
          poll_start + k * 100 * one_ms + 3 * one_ms;  // each answer 3 ms after its poll began
      for (const auto& p : names) {
        const std::string key = name + ":" + p;
        if (k > 0) total[key] += sent_in(key, k);
        switches::PortCounters pc;
        pc.name = p;
        pc.out_octets = switches::Count{1'000'000 + static_cast<std::uint64_t>(total[key]), 64};
        s.ports.push_back(pc);
      }
      sample.push_back(std::move(s));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<std::string> links_of(const nlohmann::json& carried) {
  std::vector<std::string> out;
  for (const auto& c : carried)
    out.push_back(c["switch"].get<std::string>() + "->" + c["to"].get<std::string>());
  return out;
}

TEST(SwitchTimeline, FabricPortsAreTheSwitchEndsOfTheInventorysLinks) {
  const auto ports = fabric_ports(testing::switch_fabric(), {"l1", "s1"}, {"h1", "h2"});
  // In the links' order, each link's ends in its order: h1-l1, l1-s1 (both ends), l1-s2, l2-s1.
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_EQ(ports[0].switch_name, "l1");
  EXPECT_EQ(ports[0].port, "swp1");
  EXPECT_EQ(ports[0].peer, "h1");
  EXPECT_TRUE(ports[0].to_case_host);
  EXPECT_EQ(ports[1].link, "l1-s1");
  EXPECT_EQ(ports[1].port, "swp51");
  EXPECT_EQ(ports[1].peer, "s1");
  EXPECT_FALSE(ports[1].to_case_host);
  EXPECT_EQ(ports[2].switch_name, "s1");
  EXPECT_EQ(ports[2].peer, "l1");
  EXPECT_EQ(ports[4].port, "swp2");
  EXPECT_FALSE(fabric_ports(testing::switch_fabric(), {"l1"}, {"h2"})[0].to_case_host);
}

TEST(SwitchTimeline, TheFabricRecoveryIsTheFirstPollIntervalBackAt90Percent) {
  const auto inv = testing::switch_fabric();
  const auto series =
      port_series(fabric_ports(inv, {"l1", "l2", "s1", "s2"}, {"h1", "h2"}), failover());
  // Event at 2.05 s (+3 ms of the answers' lag: the polls are at k * 100 + 3 ms). The second
  // before: polls 11 to 20, at 101 Mbit/s (data to h2, ACKs to h1). The first interval back at
  // 90% is the one from poll 25 (2.503 s): 453 ms.
  const FabricRecovery r = fabric_recovery_after(series, poll_start + 2050 * one_ms);
  ASSERT_TRUE(r.ms) << r.why;
  EXPECT_DOUBLE_EQ(*r.ms, 453);
  EXPECT_FALSE(r.never);
  EXPECT_NEAR(r.rate_before_gbps, (full_100ms + acks_100ms) * 8 / 1e8, 1e-9);
  // Nothing changed at 1.05 s: back at the first poll after it, 53 ms on.
  EXPECT_DOUBLE_EQ(*fabric_recovery_after(series, poll_start + 1050 * one_ms).ms, 53);
  // The traffic never came back when the polls stop at 2.4 s: the time to the last poll.
  const auto cut_short =
      port_series(fabric_ports(inv, {"l1", "l2", "s1", "s2"}, {"h1", "h2"}), failover(25));
  const FabricRecovery never = fabric_recovery_after(cut_short, poll_start + 2050 * one_ms);
  ASSERT_TRUE(never.ms);
  EXPECT_TRUE(never.never);
  EXPECT_DOUBLE_EQ(*never.ms, 353);
  EXPECT_NE(never.why.find("from the event to the last poll, 353 ms later"), std::string::npos);
  // No poll in the second before: nothing to compare with.
  EXPECT_FALSE(fabric_recovery_after(series, poll_start - 500 * one_ms).ms);
  // No port faces a case host: said, not guessed.
  const auto spines = port_series(fabric_ports(inv, {"s1", "s2"}, {"h1", "h2"}), failover());
  EXPECT_EQ(fabric_recovery_after(spines, poll_start + 2050 * one_ms).why,
            "no polled switch port faces the case's hosts (inventory links)");
}

TEST(SwitchTimeline, TheLinksThatCarriedTheTrafficBeforeDuringAndAfter) {
  const auto series = port_series(
      fabric_ports(testing::switch_fabric(), {"l1", "l2", "s1", "s2"}, {"h1", "h2"}), failover());
  const auto j = switch_timeline_json(series,
                                      {{"link_down l1-s1", poll_start + 2050 * one_ms},
                                       {"link_up l1-s1", poll_start + 3550 * one_ms}},
                                      100, poll_start + 100 * one_ms);
  EXPECT_EQ(j["period_ms"], 100.0);
  EXPECT_EQ(j["start_ns"], poll_start + 100 * one_ms);  // the traffic's start
  // Every port that sent at least 0.1% of the busiest's bytes: the ACK path too (0.5 MB of the
  // 44 MB l2 sent h2), the idle l2-s2 and the all but idle s2-l1 not.
  std::vector<std::string> kept;
  for (const auto& p : j["ports"])
    kept.push_back(p["switch"].get<std::string>() + ":" + p["port"].get<std::string>());
  EXPECT_EQ(kept, (std::vector<std::string>{"l1:swp1", "l2:swp1", "l1:swp51", "s1:swp1", "l1:swp52",
                                            "l2:swp51", "s1:swp2", "s2:swp2"}));
  // ms from the traffic's start: the first poll 97 ms before it, each answer 3 ms after its poll.
  EXPECT_EQ(j["ports"][0]["t_ms"][0], -97.0);
  EXPECT_EQ(j["ports"][0]["t_ms"][1], 3.0);
  EXPECT_EQ(j["ports"][1]["sent_bytes"][40], 40 * full_100ms - 4 * full_100ms - full_100ms / 2);

  const auto& down = j["events"][0];
  EXPECT_EQ(down["what"], "link_down l1-s1");
  EXPECT_DOUBLE_EQ(down["recovery_ms"].get<double>(), 453);
  EXPECT_EQ(down["recovered"], true);
  // The ACKs (1 Mbit/s) are under 5% of the 101 Mbit/s delivered: not listed.
  EXPECT_EQ(links_of(down["before"]), (std::vector<std::string>{"l2->h2", "l1->s1", "s1->l2"}));
  EXPECT_EQ(links_of(down["during"]), std::vector<std::string>{});
  EXPECT_EQ(links_of(down["after"]), (std::vector<std::string>{"l2->h2", "l1->s2", "s2->l2"}));
  EXPECT_NEAR(down["after"][1]["gbps"].get<double>(), 0.1, 1e-9);
  // The link coming back moved nothing: recovered at the next poll, the path unchanged.
  const auto& up = j["events"][1];
  EXPECT_DOUBLE_EQ(up["recovery_ms"].get<double>(), 53);
  EXPECT_EQ(links_of(up["before"]), (std::vector<std::string>{"l2->h2", "l1->s2", "s2->l2"}));
  EXPECT_EQ(links_of(up["after"]), (std::vector<std::string>{"l2->h2", "l1->s2", "s2->l2"}));
}

TEST(SwitchTimeline, ASilentSwitchOrACounterThatWentBackIsAGapNeverZero) {
  auto samples = failover();
  for (auto& s : samples[30])
    if (s.switch_name == "s2") {
      s.ports.clear();
      s.error = "timeout";
    }
  for (std::size_t k = 35; k < samples.size(); ++k)
    for (auto& s : samples[k])
      if (s.switch_name == "l1")
        for (auto& p : s.ports) p.out_octets->value -= 900'000;  // the agent restarted
  const auto series =
      port_series(fabric_ports(testing::switch_fabric(), {"l1", "s2"}, {"h1", "h2"}), samples);
  const auto& l1_up = series[1];  // l1:swp51
  EXPECT_EQ(l1_up.port.port, "swp51");
  EXPECT_TRUE(l1_up.sent_bytes[34]);
  for (std::size_t k = 35; k < samples.size(); ++k) EXPECT_FALSE(l1_up.sent_bytes[k]) << k;
  const auto& s2_down = series[4];  // s2:swp2
  EXPECT_EQ(s2_down.port.port, "swp2");
  EXPECT_FALSE(s2_down.sent_bytes[30]);
  EXPECT_DOUBLE_EQ(*s2_down.sent_bytes[31], 6 * full_100ms);
}

// switch_recovery_ms is the slowest event's recovery; one the traffic never came back from is
// said to be at least that; with no recovery read, it is absent with the event's own reason.
TEST(SwitchTimeline, TheSlowestEventsRecoveryIsTheCasesAndAnUnreadOneIsAbsentWithItsReason) {
  const auto timeline = nlohmann::json::parse(R"({"events": [
      {"what": "link_down l1-s1", "recovery_ms": 140, "recovered": true},
      {"what": "link_up l1-s1", "recovery_ms": 300, "recovered": false,
       "why": "it stayed under 90% to the end"},
      {"what": "link_down l1-s2", "recovery_ms": 200, "recovered": true}]})");
  const suites::Measured m = switch_recovery_metrics(timeline);
  EXPECT_EQ(m.values.at("switch_recovery_ms"), 300);
  EXPECT_EQ(m.where.at("switch_recovery_ms"),
            "after link_up l1-s1: at least that: it stayed under 90% to the end");
  EXPECT_TRUE(m.unmeasured.empty());

  const suites::Measured unread = switch_recovery_metrics(nlohmann::json::parse(
      R"({"events": [{"what": "link_down l1-s1", "why": "no poll saw the second before it"}]})"));
  EXPECT_FALSE(unread.values.contains("switch_recovery_ms"));
  EXPECT_EQ(unread.unmeasured.at("switch_recovery_ms"), "no poll saw the second before it");
  const suites::Measured none = switch_recovery_metrics(nlohmann::json::parse(R"({"events": []})"));
  EXPECT_EQ(none.unmeasured.at("switch_recovery_ms"), "no fabric event happened in this case");
}

}  // namespace
}  // namespace rocehil::run
