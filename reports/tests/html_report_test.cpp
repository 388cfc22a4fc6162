#include "rocehil/reports/html_report.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "record_fixture.hpp"
#include "rocehil/reports/run_json.hpp"
#include "svg_axes.hpp"

namespace rocehil::reports {
namespace {

// Chromium renders a real run's report in the run_cli system test; these check what the page
// says and that nothing in run.json can break out of it.

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

nlohmann::json collective_raw() {
  return nlohmann::json::parse(R"({
    "traffic": {"ranks": [{"rank": 0, "host": "h1"}, {"rank": 1, "host": "h2"}],
                "cases": [{"iteration_us": [100, 110, 105, 300],
                           "per_rank": [{"rank": 0, "per_qp": [{"qpn": 257, "peer": 1, "gbps": 9.5}]},
                                        {"rank": 1, "per_qp": [{"qpn": 258, "peer": 0, "gbps": 4.1}]}],
                           "pairwise": {"gbps": [[0, 9.5], [4.1, 0]], "median_gbps": 6.8,
                                        "outliers": [{"a": 1, "b": 0, "gbps": 4.1}],
                                        "suspects": [1]}}]},
    "captures": [
      {"point": "s1-mirror", "iface": "m1", "analysis": {"roce": {"bytes": 3000000},
        "timeline": {"bin_ms": 10, "start_ns": 1000000000,
                     "bins": [{"t_ms": 0, "cnp": 4, "pfc_xoff": 0, "ecn_ce": 9}]}}},
      {"point": "s2-mirror", "iface": "m2", "analysis": {"roce": {"bytes": 1000000},
        "timeline": {"bin_ms": 10, "start_ns": 1020000000,
                     "bins": [{"t_ms": 10, "cnp": 2, "pfc_xoff": 7, "ecn_ce": 0}]}}}]})");
}

nlohmann::json sample_json() {
  RunRecord run = testing::sample_run();
  run.suite_file = "suites/smoke.yaml";
  run.suite_text = "name: smoke";
  run.inventory_text = "hosts: {}";
  run.preflight = nlohmann::json::parse(R"({"hosts": [{"name": "h1", "verdict": "ok",
      "facts": {"kernel": "6.1.0", "rdma": [{"name": "mlx5_0", "fw_ver": "28.39.1002"}],
                "netdevs": [{"name": "eth1", "mtu": 4200, "pfc": [3], "ecn_np": [3]}]}}]})");
  run.cases[0].attempts[0].raw = collective_raw();
  return to_json(run);
}

TEST(HtmlReport, SummaryThresholdsAndSnapshotAreOnThePage) {
  const std::string html = html_report(sample_json());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id : {"allreduce/qps=1", "allreduce/qps=8", "pfc_storm", "alltoall", "incast"})
    EXPECT_NE(html.find(std::string(">") + id + "<"), std::string::npos) << id;
  EXPECT_NE(html.find("FAIL</span>"), std::string::npos);
  EXPECT_NE(html.find("failed as expected"), std::string::npos);
  EXPECT_NE(html.find("ERROR (not measured)"), std::string::npos);
  // The failing threshold with its measured value and limit, in the summary and the case.
  EXPECT_NE(html.find("fail: busbw_gbps &gt; 0.5 * link_gbps: busbw_gbps = 0.25, needs &gt; 0.5"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">0.25 Gbit/s</td><td class=\"num\">0.5 Gbit/s</td>"),
            std::string::npos);
  EXPECT_NE(html.find("h3 in phase setup"), std::string::npos);
  EXPECT_NE(html.find("28.39.1002"), std::string::npos);  // firmware in the snapshot
  EXPECT_NE(html.find("<td>3</td><td>-</td><td>3</td>"), std::string::npos);  // ECN NP, RP, PFC
}

// Five repeats: the summary gives their median, named so, and quotes the repeat that failed
// (the second), not the last one (which passed with the highest value); the case numbers its
// repeats as repeats, not as attempts.
TEST(HtmlReport, RepeatsAreTheirMedianAndAFailureQuotesItsWorstRepeat) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::five_repeats("busbw_gbps >= 0.25"));
  const std::string html = html_report(to_json(run));
  const std::string summary = html.substr(0, html.find("<section"));
  EXPECT_NE(summary.find("<td>bw 0.31 Gbit/s, median of 5 repeats (0.229 to 0.395)</td>"
                         "<td class=\"num\">5</td>"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("fail: busbw_gbps &gt;= 0.25: failed in 1 of 5 repeats; the worst, "
                         "repeat 2: busbw_gbps = 0.229, needs &gt;= 0.25"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("0.395 Gbit"), std::string::npos);
  EXPECT_NE(html.find("<p>repeat 5 of 5:</p>"), std::string::npos);
  EXPECT_EQ(html.find("attempt"), std::string::npos);
}

// A run.json written before cases carried their summary gives the same page: the summary is
// made from the attempts, as when the run was written.
TEST(HtmlReport, ARunJsonWithoutCaseSummariesReadsTheSame) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::five_repeats("busbw_gbps >= 0.25"));
  nlohmann::json j = to_json(run);
  const std::string html = html_report(j);
  for (auto& c : j["cases"]) c.erase("summary");
  EXPECT_EQ(html_report(j), html);
}

// A retry is an attempt of its repeat, said so.
TEST(HtmlReport, ARetryIsAnAttemptOfItsRepeat) {
  RunRecord run;
  run.suite_name = "s";
  run.cases.push_back(testing::repeated_case(
      "p2p_bw", {"busbw_gbps >= 0.3"},
      {{{{"busbw_gbps", 0.1}}, {{"busbw_gbps", 0.4}}}, {{{"busbw_gbps", 0.5}}}}, "bw"));
  const std::string html = html_report(to_json(run));
  EXPECT_NE(html.find("<p>repeat 1 of 2, attempt 1:</p>"), std::string::npos) << html;
  EXPECT_NE(html.find("<p>repeat 1 of 2, attempt 2 (retried after a failure):</p>"),
            std::string::npos);
  EXPECT_NE(html.find("<p>repeat 2 of 2:</p>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">2 (1 retry)</td>"), std::string::npos);
}

// The capture points' bars are marked as the case was graded: red above the case's own
// ecmp_imbalance limit, and only when that threshold was not met; the caption says so in words.
TEST(HtmlReport, ImbalanceBarsAreMarkedOnlyWhereTheThresholdWasNotMet) {
  const auto page = [](const std::string& verdict) {
    nlohmann::json run = sample_json();
    run["cases"][0]["attempts"][0]["grade"]["thresholds"].push_back(
        {{"threshold", "ecmp_imbalance <= 1.2"},
         {"level", "warn"},
         {"verdict", verdict},
         {"measured", 1.5},
         {"limit", 1.2},
         {"detail", ""}});
    return html_report(run);
  };
  const std::string red = std::string("fill=\"") + std::string(svg::kWarning) + "\"";
  const std::string passed = page("pass"), warned = page("warn");
  EXPECT_NE(passed.find("ecmp_imbalance &lt;= 1.2 passed, so no bar is marked"), std::string::npos);
  EXPECT_NE(warned.find("red: above 1.2 x the mean, the limit of ecmp_imbalance &lt;= 1.2, which "
                        "this case did not meet (warn)"),
            std::string::npos);
  // 3 MB against a mean of 2 MB: one bar above 1.2 x the mean, red only when not met.
  EXPECT_EQ(count(warned, red), count(passed, red) + 1);
  EXPECT_EQ(passed.find("orange"), std::string::npos);
  // The threshold table says what an unmet threshold would do, not a "level: fail" beside a pass.
  EXPECT_NE(warned.find("<th>if not met</th>"), std::string::npos);
  EXPECT_EQ(warned.find("<th>level</th>"), std::string::npos);
  EXPECT_NE(warned.find("<td>warns</td>"), std::string::npos);
}

// Times read in their own unit: 107 ms on a millisecond axis, not "107k" microseconds.
TEST(HtmlReport, IterationTimesReadInTheUnitOfTheirSize) {
  nlohmann::json run = sample_json();
  EXPECT_NE(html_report(run).find("iteration time (us)"), std::string::npos);
  run["cases"][0]["attempts"][0]["raw"]["traffic"]["cases"][0]["iteration_us"] = {107000, 112200,
                                                                                  109000};
  const std::string html = html_report(run);
  EXPECT_NE(html.find("iteration time (ms)"), std::string::npos);
  EXPECT_EQ(html.find("iteration time (us)"), std::string::npos);
  EXPECT_EQ(html.find("112k"), std::string::npos);
}

// A latency test's round trips are drawn from the client's histogram, its p50 and p99 marked at
// bucket edges, as the thresholds graded them.
TEST(HtmlReport, ALatencyCaseHasItsRoundTripChart) {
  nlohmann::json run = sample_json();
  run["cases"][0]["attempts"][0]["raw"] = nlohmann::json::parse(R"({"traffic": {
      "client": {"name": "h1", "results": {"latency": {"samples": 100, "p50_us": 12.5,
          "histogram": [[10, 20], [12.5, 40], [15, 30], [400, 10]]}}}}})");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("allreduce/qps=1: round-trip latency"), std::string::npos) << html;
  EXPECT_NE(html.find("100 round trips after the warm-up"), std::string::npos) << html;
  // Without a histogram (perftest's lat), no chart.
  run["cases"][0]["attempts"][0]["raw"]["traffic"]["client"]["results"].erase("latency");
  EXPECT_EQ(html_report(run).find("round-trip latency"), std::string::npos);
}

// A bw case's senders' timelines are drawn as rates, with the fabric's events as dashed lines:
// 125,000 bytes in 10 ms is 0.1 Gbit/s; a stretch with no bytes reads 0.
TEST(HtmlReport, TheSendersRatesAreDrawnWithTheEvents) {
  nlohmann::json run = sample_json();
  run["cases"][0]["attempts"][0]["raw"] = nlohmann::json::parse(R"json({"timeline": {
      "senders": [{"sender": "h1 (part roce)", "start_ns": 5000000000, "period_us": 10000,
                   "t_us": [0, 10000, 20000, 30000], "bytes": [0, 125000, 125000, 250000]}],
      "events": [{"what": "link_down l1-s1", "at_ns": 5015000000, "senders": []}]}})json");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("allreduce/qps=1: delivered rate per sender"), std::string::npos) << html;
  EXPECT_NE(html.find("h1 (part roce)"), std::string::npos);
  EXPECT_NE(html.find("link_down l1-s1"), std::string::npos);
  EXPECT_NE(html.find("dashed: the fabric events"), std::string::npos);
  EXPECT_EQ(html.find("senders; run.json has them all"), std::string::npos);
  // A thousand ranks would be one blot: 16 lines are drawn, and the caption says so.
  nlohmann::json& senders = run["cases"][0]["attempts"][0]["raw"]["timeline"]["senders"];
  for (int r = 0; r < 17; ++r) {
    nlohmann::json rank = senders[0];
    rank["sender"] = "rank " + std::to_string(r) + " (h" + std::to_string(r % 4 + 1) + ")";
    senders.push_back(rank);
  }
  const std::string many = html_report(run);
  EXPECT_NE(many.find("(the first 16 of 18 senders; run.json has them all)"), std::string::npos);
  EXPECT_NE(many.find("rank 14 (h3)"), std::string::npos);
  EXPECT_EQ(many.find("rank 15 (h4)"), std::string::npos);
  // No timeline (perftest's case): no chart.
  run["cases"][0]["attempts"][0]["raw"] = nlohmann::json::object();
  EXPECT_EQ(html_report(run).find("delivered rate per sender"), std::string::npos);
}

// The switch ports polled through a case with events are drawn as rates: 1,250,000 bytes in
// 100 ms is 0.1 Gbit/s; a poll the switch did not answer (null) leaves a gap, not a 0.
TEST(HtmlReport, TheSwitchPortsRatesAreDrawnWithTheEvents) {
  nlohmann::json run = sample_json();
  run["cases"][0]["attempts"][0]["raw"] = nlohmann::json::parse(R"json({"switch_timeline": {
      "period_ms": 100, "start_ns": 5000000000,
      "ports": [{"switch": "l1", "port": "swp51", "link": "l1-s1", "to": "s1",
                 "to_case_host": false, "t_ms": [0, 100, 200, 300, 400],
                 "sent_bytes": [0, 1250000, null, 1250000, 2500000]}],
      "events": [{"what": "link_down l1-s1", "at_ns": 5150000000}]}})json");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("allreduce/qps=1: rate per switch port (polled)"), std::string::npos) << html;
  EXPECT_NE(html.find("l1-&gt;s1 (l1:swp51)"), std::string::npos) << html;
  EXPECT_NE(html.find("link_down l1-s1"), std::string::npos);
  EXPECT_NE(html.find("between polls (every 100 ms)"), std::string::npos);
  // No ports polled: no chart.
  run["cases"][0]["attempts"][0]["raw"]["switch_timeline"]["ports"] = nlohmann::json::array();
  EXPECT_EQ(html_report(run).find("rate per switch port"), std::string::npos);
}

// The mirrors' CNP and PFC bins, the senders' rates and the switch ports' rates share the case's
// clock: seconds from the traffic's start (the switch timeline's), with the events on each.
TEST(HtmlReport, TheCapturesTimelineIsOnTheTrafficsClockWithTheEvents) {
  nlohmann::json run = sample_json();
  nlohmann::json& raw = run["cases"][0]["attempts"][0]["raw"];
  EXPECT_EQ(html_report(run).find("time (s) from the traffic&apos;s start"), std::string::npos);
  raw["switch_timeline"] = nlohmann::json::parse(R"json({"period_ms": 100, "start_ns": 900000000,
      "ports": [], "events": [{"what": "link_down l1-s1", "at_ns": 1010000000}]})json");
  const std::string html = html_report(run);
  const auto chart = html.find("allreduce/qps=1: CNP and PFC over time");
  ASSERT_NE(chart, std::string::npos);
  const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
  EXPECT_NE(svg.find("time (s) from the traffic&apos;s start"), std::string::npos) << svg;
  EXPECT_NE(svg.find("link_down l1-s1"), std::string::npos) << svg;
}

// What the run set on the fabric, whether it held, and what it was before.
TEST(HtmlReport, TheSettingsInForceAreListedWithWhetherTheyHeld) {
  nlohmann::json run = sample_json();
  EXPECT_EQ(html_report(run).find("Settings in force"), std::string::npos);  // none set
  run["settings"] = nlohmann::json::parse(R"({"restored": true,
      "in_force": [{"host": "h1", "netdev": "eth1", "name": "roce_np.min_time_between_cnps",
                    "value": "7", "held": false, "found": "2"},
                   {"host": "", "netdev": "", "name": "switch.uplink_mbps", "value": "300"}],
      "changes": [{"host": "h1", "netdev": "eth1", "name": "roce_np.min_time_between_cnps",
                   "before": "4", "after": "7"}]})");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("<h2>Settings in force</h2>"), std::string::npos);
  EXPECT_NE(html.find("put back as they were at its end"), std::string::npos);
  EXPECT_NE(html.find("<td>roce_np.min_time_between_cnps</td><td>7</td><td>4</td>"
                      "<td><span class=\"fail\">no: read 2 later</span></td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>switches</td><td></td><td>switch.uplink_mbps</td><td>300</td>"
                      "<td>(unchanged)</td><td>yes</td>"),
            std::string::npos);
}

TEST(HtmlReport, EveryChartOfACaseWithCapturesAndACollective) {
  const std::string html = html_report(sample_json());
  for (const char* title :
       {"allreduce/qps=1: iteration time", "allreduce/qps=1: RoCE bytes per capture point",
        "allreduce/qps=1: CNP and PFC over time", "allreduce/qps=1: per-QP rate",
        "allreduce/qps=1: pairwise bandwidth", "busbw by case"})
    EXPECT_NE(html.find(title), std::string::npos) << title;
  // The test-level bar chart, and five charts of the one case with raw data.
  EXPECT_EQ(count(html, "<svg "), 6u);
  EXPECT_NE(html.find("suspect ranks 1"), std::string::npos);
}

// A ring's QPs to its previous rank carry nothing by design: left out of the rate chart and
// counted under it; a QP the plan sends on that carried nothing stays, as the zero bar it is.
TEST(HtmlReport, QpsThatOnlyReceiveByThePlanAreNotDrawnAsZeroBars) {
  nlohmann::json run = sample_json();
  auto& per_rank = run["cases"][0]["attempts"][0]["raw"]["traffic"]["cases"][0]["per_rank"];
  per_rank[0]["per_qp"].push_back({{"qpn", 259}, {"peer", 1}, {"gbps", 0.0}, {"sends", false}});
  per_rank[1]["per_qp"].push_back({{"qpn", 260}, {"peer", 0}, {"gbps", 0.0}, {"sends", false}});
  per_rank[1]["per_qp"].push_back({{"qpn", 261}, {"peer", 0}, {"gbps", 0.0}, {"sends", true}});
  const std::string html = html_report(run);
  EXPECT_NE(html.find("qp 0x101"), std::string::npos);
  EXPECT_NE(html.find("qp 0x105"), std::string::npos);  // sends by the plan, carried nothing
  EXPECT_EQ(html.find("qp 0x103"), std::string::npos);
  EXPECT_EQ(html.find("qp 0x104"), std::string::npos);
  EXPECT_NE(html.find("(2 QPs that only receive by the plan, such as a ring&apos;s to its "
                      "previous rank, are not drawn)"),
            std::string::npos);
}

// The counters each host's NIC changed during the case, with the host named beside them, and
// what could not be read; unchanged counters are left out (run.json keeps only non-zero ones).
TEST(HtmlReport, NicCountersPerHostNonZeroOnlyWithResetsAndProblems) {
  nlohmann::json run = sample_json();
  run["cases"][0]["attempts"][0]["raw"]["nics"] = nlohmann::json::parse(R"([
    {"host": "h1", "device": "mlx5_0", "port": 1, "netdev": "ens1f0np0",
     "deltas": {"hw_counters/np_cnp_sent": 12, "hw_counters/packet_seq_err": 3,
                "hw_counters/out_of_sequence": 0},
     "reset": ["hw_counters/rp_cnp_handled"], "problems": []},
    {"host": "h2", "device": "", "port": 1, "netdev": "v<1>", "deltas": {},
     "reset": [], "problems": ["ethtool statistics of v<1>: Operation not supported"]}])");
  run["cases"][0]["attempts"][0]["raw"]["reconciliation"] = nlohmann::json::parse(R"({
    "cnp": {"mirror": 98, "nics": 100, "value": 0.98},
    "pfc": {"mirror": 4, "nics": null, "unmeasured": "h1's NIC on link h1-l1 has no tx pause"}})");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("CNPs: the mirror ports saw 98, the NICs counted 100 on the mirrored "
                      "paths: 0.98"),
            std::string::npos);
  EXPECT_NE(html.find("PFC frames: not reconciled: h1&apos;s NIC on link h1-l1 has no tx pause"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>h1</td><td>mlx5_0 port 1 (ens1f0np0)</td>"
                      "<td><code>hw_counters/np_cnp_sent</code></td><td class=\"num\">12</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td></td><td></td><td><code>hw_counters/packet_seq_err</code></td>"),
            std::string::npos);
  EXPECT_EQ(html.find("hw_counters/out_of_sequence"), std::string::npos);
  EXPECT_NE(html.find("<code>hw_counters/rp_cnp_handled</code> went backwards (reset)"),
            std::string::npos);
  EXPECT_NE(html.find("h2 v&lt;1&gt;: ethtool statistics of v&lt;1&gt;: Operation not supported"),
            std::string::npos);
  EXPECT_EQ(count(html, "NIC counters during the case"), 1u);  // only the attempt that has them
}

// The switch ports a person must look at (drops, errors, PFC), the switch that did not answer
// with its reason, and the switch reconciliations; ports that only carried traffic are counted.
TEST(HtmlReport, SwitchPortsThatDroppedOrPausedAndSwitchesThatDidNotAnswer) {
  nlohmann::json run = sample_json();
  run["cases"][0]["attempts"][0]["raw"]["switches"] = nlohmann::json::parse(R"([
    {"switch": "l1", "answered": true, "pfc_mib": true, "queue_mib": false, "ports": [
      {"port": "swp1", "in_octets": 1000, "out_octets": 2000, "in_discards": 0,
       "out_discards": 12, "queue_drops": null, "in_errors": 0, "out_errors": 0,
       "pfc_rx": [0, 0, 0, 40, 0, 0, 0, 0], "pfc_tx": [0, 0, 0, 0, 0, 0, 0, 0]},
      {"port": "swp51", "in_octets": 5, "out_octets": 5, "in_discards": 0, "out_discards": 0,
       "in_errors": 0, "out_errors": 0, "pfc_rx": [0, 0, 0, 0, 0, 0, 0, 0],
       "pfc_tx": [0, 0, 0, 0, 0, 0, 0, 0], "notes": ["ifHCInOctets went backwards"]}]},
    {"switch": "s<1>", "answered": false, "error": "after the case: no answer"}])");
  run["cases"][0]["attempts"][0]["raw"]["reconciliation"] = nlohmann::json::parse(R"({
    "switch_pfc": {"switches": 40, "nics": 40, "value": 1},
    "switch_mirror": {"mirror": 10, "switches": null, "unmeasured": "use capture filter: all"}})");
  const std::string html = html_report(run);
  EXPECT_NE(html.find("<tr><td>l1</td><td>swp1</td><td class=\"num\">1,000</td>"
                      "<td class=\"num\">2,000</td><td class=\"num\">0</td>"
                      "<td class=\"num\">12</td><td class=\"num\">-</td>"
                      "<td class=\"num\">0</td><td>p3 40</td><td>0</td></tr>"),
            std::string::npos);
  EXPECT_EQ(html.find("<td>swp51</td>"), std::string::npos);  // it only carried traffic
  EXPECT_NE(html.find("l1:swp51: ifHCInOctets went backwards"), std::string::npos);
  EXPECT_NE(html.find("s&lt;1&gt;: no counters: after the case: no answer"), std::string::npos);
  EXPECT_NE(html.find("PFC at the host-facing switch ports: the switch ports received 40, the "
                      "NICs sent 40: 1"),
            std::string::npos);
  EXPECT_NE(html.find("Mirrored spine ports: not reconciled: use capture filter: all"),
            std::string::npos);
}

TEST(HtmlReport, KeptCapturesAreLinkedBesideTheirAttemptAndOnesNotKeptSayWhy) {
  RunRecord record = testing::sample_run();
  record.cases[0].attempts[0].captures_kept = {
      {.point = "s1-mirror",
       .host = "cap",
       .files = {"captures/allreduce_qps=1/a1-s1-mirror-1.pcapng",
                 "captures/allreduce_qps=1/a1-s1-mirror-2.pcapng"},
       .bytes = 1536000,
       .not_kept = ""},
      {.point = "s2<mirror>", .host = "cap", .files = {}, .bytes = 0, .not_kept = "too big"}};
  const nlohmann::json run = to_json(record);
  const nlohmann::json& kept = run["cases"][0]["attempts"][0]["captures_kept"];
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0]["bytes"], 1536000);
  EXPECT_FALSE(kept[0].contains("not_kept"));
  EXPECT_EQ(kept[1]["not_kept"], "too big");
  EXPECT_TRUE(run["cases"][1]["attempts"][0]["captures_kept"].empty());
  const std::string html = html_report(run);
  EXPECT_NE(html.find("<li>s1-mirror (on cap, 1.54 MB): "
                      "<a href=\"captures/allreduce_qps=1/a1-s1-mirror-1.pcapng\">"
                      "captures/allreduce_qps=1/a1-s1-mirror-1.pcapng</a>, "
                      "<a href=\"captures/allreduce_qps=1/a1-s1-mirror-2.pcapng\">"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<li>s2&lt;mirror&gt;: not kept: too big</li>"), std::string::npos);
  EXPECT_EQ(count(html, "Captures kept"), 1u);
}

TEST(HtmlReport, NothingInTheRunEscapesIntoMarkupOrLeavesTheFile) {
  nlohmann::json run = sample_json();
  run["cases"][0]["id"] = "<script>alert(1)</script>";
  run["suite"]["text"] = "</pre><img src=\"http://example.com/x.png\">";
  const std::string html = html_report(run);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  const std::regex external(R"re((src|href)="(?!#)[^"]*")re");
  EXPECT_FALSE(std::regex_search(html, external));
}

TEST(HtmlReport, AHandEditedRunJsonDrawsWhatItCanAndNeverThrows) {
  for (const char* text : {"null", "[]", "{}", R"({"cases": 5})", R"({"cases": [null, 3]})",
                           R"({"cases": [{"attempts": [{"raw": {"captures": [1, {"analysis":
                              {"timeline": {"bin_ms": 0, "start_ns": 1}}}]}}]}]})",
                           R"({"inventory": {"preflight": {"hosts": [{"facts": []}]}}})"}) {
    std::string html;
    EXPECT_NO_THROW(html = html_report(nlohmann::json::parse(text))) << text;
    EXPECT_NE(html.find("</html>"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace rocehil::reports
