#include "rocehil/suites/suite.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rocehil/common/error.hpp"
#include "rocehil/suites/metrics.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

using testing::errors_of;

Suite parsed_suite(std::string_view text) {
  SuiteLoadResult r = parse_suite(text, "s.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  return r.suite.value_or(Suite{});
}

// The verbs rehearsal (testbed up --vm): no provider of its own, so the inventory's verbs
// applies, and no threshold on a metric the verbs provider never measures per QP.
TEST(Suite, TheRehearsalSuiteLoadsAndLeavesTheProviderToTheInventory) {
  const Suite s = load_suite(std::string(ROCEHIL_SUITES_DIR) + "/rehearsal.yaml");
  EXPECT_EQ(s.name, "rehearsal");
  for (const auto& t : s.tests) {
    EXPECT_TRUE(t.settings.provider.empty()) << t.name;
    for (const auto& threshold : t.thresholds)
      for (const char* per_qp : {"retransmits", "timeouts", "naks", "cnps "})
        EXPECT_FALSE(threshold.text.starts_with(per_qp)) << t.name << ": " << threshold.text;
  }
  std::vector<std::string> ids;
  for (const auto& c : expand(s)) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"p2p_bw", "p2p_lat", "allreduce/qps=1",
                                           "allreduce/qps=4", "alltoall", "incast", "pfc_storm"}));
}

TEST(Suite, TheSmokeSuiteLoadsAndExpands) {
  const Suite s = load_suite(std::string(ROCEHIL_SUITES_DIR) + "/smoke.yaml");
  EXPECT_EQ(s.name, "smoke");
  ASSERT_EQ(s.tests.size(), 6u);
  EXPECT_EQ(s.tests[2].workload, "allreduce");
  EXPECT_EQ(s.tests[2].settings.qps, (std::vector<std::uint32_t>{1, 4, 8}));
  EXPECT_EQ(s.tests[2].settings.iterations, 10u);  // from defaults
  EXPECT_EQ(s.tests[2].thresholds[1].level, Level::warn);
  EXPECT_EQ(s.tests[2].thresholds[2].retry, 1);
  EXPECT_TRUE(s.tests[5].expect_fail);
  EXPECT_EQ(s.tests[2].settings.captures, (std::vector<std::string>{"s1-mirror", "s2-mirror"}));
  ASSERT_TRUE(s.tests[5].inject.has_value());
  EXPECT_EQ(s.tests[5].inject->link, "l1-s1");
  std::vector<std::string> ids;
  for (const auto& c : expand(s)) ids.push_back(c.id);
  EXPECT_EQ(ids,
            (std::vector<std::string>{"p2p_bw", "p2p_lat", "allreduce/qps=1", "allreduce/qps=4",
                                      "allreduce/qps=8", "alltoall", "incast", "pfc_storm"}));
}

TEST(Suite, SweepsAreTheCrossProductWithReadableIds) {
  const Suite s = parsed_suite(R"(schema_version: 1
name: sweep
tests:
  - name: ar
    workload: allreduce
    size: [64K, 64M, 1000]
    qps: [1, 8]
    strategy: [split, round_robin]
)");
  const auto cases = expand(s);
  ASSERT_EQ(cases.size(), 12u);
  EXPECT_EQ(cases[0].id, "ar/size=64K/qps=1/strategy=split");
  EXPECT_EQ(cases[3].id, "ar/size=64K/qps=8/strategy=round_robin");
  EXPECT_EQ(cases[4].id, "ar/size=64M/qps=1/strategy=split");
  EXPECT_EQ(cases[4].size, 64u << 20);
  EXPECT_EQ(cases[11].id, "ar/size=1000/qps=8/strategy=round_robin");
  EXPECT_EQ(cases[11].size, 1000u);
}

TEST(Suite, EveryProblemIsReportedWithItsPlace) {
  const auto errors = errors_of(R"(schema_version: 2
name: bad suite
defaults:
  qps: 0
  itertions: 5
tests:
  - name: a
    workload: allreduce2
    size: [1M, 2X]
    thresholds:
      - busbw_gpbs >= 1
      - "busbw_gbps >= 0.9 * link_gbs"
      - {check: "retransmits == 0", level: maybe}
  - name: a
    workload: lat
    qps: 4
  - workload: bw
)");
  EXPECT_EQ(errors,
            (std::vector<std::string>{
                "s.yaml:1:17: schema_version 2 is out of range; use 1-1",
                "s.yaml:2:7: suite name 'bad suite' may hold letters, digits and . _ - only",
                "s.yaml:4:8: defaults: qps 0 is out of range; use 1-16384",
                "s.yaml:5:3: unknown key 'itertions' in defaults; did you mean 'iterations'?",
                "s.yaml:8:15: test 'a': workload 'allreduce2' is unknown; use one of bw, lat, "
                "calibrate_bw, calibrate_lat, iperf3, "
                "allreduce, allgather, reduce_scatter, alltoall, broadcast, tree_allreduce, "
                "hierarchical_allreduce, incast, permutation, pairwise",
                "s.yaml:9:16: test 'a': size must be a size from 1 byte to 1G such as 65536, 64K "
                "or 1M, got '2X'",
                "s.yaml:11:9: test 'a': threshold 'busbw_gpbs >= 1': unknown metric 'busbw_gpbs' "
                "(did you mean 'busbw_gbps'?)",
                "s.yaml:12:30: test 'a': threshold 'busbw_gbps >= 0.9 * link_gbs': unknown name "
                "'link_gbs' (did you mean 'link_gbps'?)",
                "s.yaml:13:44: test 'a': level 'maybe' is not one of fail, warn; use one of them",
                "s.yaml:14:11: test 'a' is defined twice; give each test its own name",
                "s.yaml:16:10: test 'a': lat pings over one QP; drop qps",
                "s.yaml:17:5: a test has no 'name'; add one, e.g. 'name: allreduce'",
            }));
}

TEST(Suite, FileLevelProblems) {
  EXPECT_EQ(errors_of(""),
            std::vector<std::string>{"s.yaml:0:0: the file is empty; a suite starts with "
                                     "'schema_version: 1'"});
  EXPECT_EQ(
      errors_of("schema_version: 1\nname: x\ntests: []\n"),
      std::vector<std::string>{"s.yaml:3:8: tests is empty; a suite needs at least one test"});
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests: [\n").size(), 1u);
  // A missing key is said once, where the map starts: not again as a value at line 0.
  EXPECT_EQ(errors_of("tests:\n  - {name: a, workload: bw}\n"),
            (std::vector<std::string>{
                "s.yaml:1:1: the suite has no 'schema_version'; add one, e.g. 'schema_version: 1'",
                "s.yaml:1:1: the suite has no 'name'; add one, e.g. 'name: smoke'"}));
  EXPECT_THROW(load_suite("/nonexistent/suite.yaml"), Error);
}

TEST(Suite, AHugeSweepIsRefused) {
  std::string sizes, qps;
  for (int i = 1; i <= 120; ++i) {
    if (i > 1) sizes += ',';
    sizes += std::to_string(i);
  }
  for (int i = 1; i <= 100; ++i) {
    if (i > 1) qps += ',';
    qps += std::to_string(i);
  }
  const auto errors = errors_of(
      "schema_version: 1\nname: x\ntests:\n  - name: a\n"
      "    workload: allreduce\n    size: [" +
      sizes +
      "]\n"
      "    qps: [" +
      qps + "]\n");
  EXPECT_EQ(errors, std::vector<std::string>{
                        "s.yaml:4:5: test 'a': its sweeps make 12000 cases, more than 10000; "
                        "sweep fewer values or split the test"});
}

// Found by fuzz_suite_loader: a value listed twice made two cases with one id.
TEST(Suite, AValueSweptTwiceIsRefused) {
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: a\n"
                      "    workload: allreduce\n    size: [2K, 2048]\n"
                      "    strategy: [split, split]\n"),
            (std::vector<std::string>{
                "s.yaml:6:16: test 'a': size lists '2048' twice; drop one (use 'repeats' to "
                "run a case more than once)",
                "s.yaml:7:23: test 'a': strategy lists 'split' twice; drop one (use 'repeats' to "
                "run a case more than once)"}));
}

TEST(Suite, AnInjectionIsReadWithItsDefaults) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: storm\n    workload: bw\n"
      "    inject: {from: s1, link: l1-s1, priority: [3, 4], duration_s: 1.5}\n"
      "  - name: calm\n    workload: bw\n");
  ASSERT_TRUE(s.tests[0].inject.has_value());
  const Injection& in = *s.tests[0].inject;
  EXPECT_EQ(in.kind, "pfc");
  EXPECT_EQ(in.from, "s1");
  EXPECT_EQ(in.link, "l1-s1");
  EXPECT_EQ(in.priorities, (std::vector<int>{3, 4}));
  EXPECT_EQ(in.quanta, 65535u);
  EXPECT_EQ(in.duration_s, 1.5);
  EXPECT_EQ(in.where.line, 6);
  EXPECT_FALSE(s.tests[1].inject.has_value());

  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: storm\n"
                      "    workload: bw\n    inject: {kind: pause, link: l1-s1, priority: 9, "
                      "pps: 0}\n"),
            (std::vector<std::string>{
                "s.yaml:6:13: test 'storm': inject has no 'from'; add one, e.g. 'from: s1'",
                "s.yaml:6:50: test 'storm': inject: priority 9 is out of range; use 0-7",
                "s.yaml:6:50: test 'storm': inject: 802.3x pause has no priorities; drop "
                "priority",
                "s.yaml:6:58: test 'storm': inject: pps must be a number from 1 to 10000000, "
                "got 0"}));
}

TEST(Suite, UdIsBwSendOfOnePacketPerMessage) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: ud\n    workload: bw\n"
      "    transport: ud\n    opcode: send\n    size: 1K\n  - name: rc\n    workload: bw\n");
  EXPECT_EQ(s.tests[0].settings.transport, "ud");
  EXPECT_EQ(s.tests[1].settings.transport, "rc");
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: u\n"
                      "    workload: allreduce\n    transport: ud\n    size: [1K, 2K]\n"),
            (std::vector<std::string>{
                "s.yaml:6:16: test 'u': transport ud needs workload bw, not allreduce",
                "s.yaml:6:16: test 'u': transport ud sends with opcode send, not write",
                "s.yaml:7:11: test 'u': a UD message is one packet: size must be at most 1024 "
                "(the test's path mtu), got 2048"}));
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: u\n"
                      "    workload: bw\n    transport: uc\n"),
            (std::vector<std::string>{
                "s.yaml:6:16: test 'u': transport 'uc' is not one of rc, ud; use one of them"}));
}

TEST(Suite, CapturesAreKeptOnlyWhenTheSuiteSaysSoAndBounded) {
  const Suite plain =
      parsed_suite("schema_version: 1\nname: x\ntests:\n  - name: a\n    workload: bw\n");
  EXPECT_EQ(plain.capture.keep, "never");
  EXPECT_EQ(plain.capture.keep_mb, 64u);
  EXPECT_EQ(plain.capture.keep_total_mb, 4096u);
  const Suite kept = parsed_suite(
      "schema_version: 1\nname: x\ncapture:\n  keep: failed\n  keep_mb: 8\n"
      "  keep_total_mb: 100\ntests:\n  - name: a\n    workload: bw\n");
  EXPECT_EQ(kept.capture.keep, "failed");
  EXPECT_EQ(kept.capture.keep_mb, 8u);
  EXPECT_EQ(kept.capture.keep_total_mb, 100u);
  const auto errors = errors_of(
      "schema_version: 1\nname: x\ncapture:\n  keep: sometimes\n  keep_mb: 1\n"
      "tests:\n  - name: a\n    workload: bw\n");
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("s.yaml:4:9: capture: keep 'sometimes' is not one of never, failed, "
                            "always",
                            0),
            0u)
      << errors[0];
  EXPECT_EQ(errors[1].rfind("s.yaml:5:12: capture: keep_mb", 0), 0u) << errors[1];
}

// What a site must be able to set: the path MTU (UD's message bound with it), the send queue
// depth and the service level, read and refused at their line.
TEST(Suite, MtuTxDepthAndServiceLevelAreTheTests) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ndefaults: {mtu: 4096}\ntests:\n  - name: ud\n"
      "    workload: bw\n    transport: ud\n    opcode: send\n    size: 4K\n"
      "    tx_depth: 512\n    sl: 3\n  - name: rc\n    workload: bw\n");
  EXPECT_EQ(s.tests[0].settings.mtu, 4096u);
  EXPECT_EQ(s.tests[0].settings.tx_depth, 512u);
  EXPECT_EQ(s.tests[0].settings.sl, 3);
  EXPECT_EQ(s.tests[1].settings.mtu, 4096u);  // from defaults
  EXPECT_EQ(s.tests[1].settings.tx_depth, 64u);
  EXPECT_EQ(s.tests[1].settings.sl, 0);
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: u\n    workload: bw\n"
                      "    mtu: 3000\n    sl: 8\n    tx_depth: 0\n"),
            (std::vector<std::string>{
                "s.yaml:6:10: test 'u': mtu must be a RoCE path MTU: 256, 512, 1024, 2048 or "
                "4096, got 3000",
                "s.yaml:7:9: test 'u': sl 8 is out of range; use 0-7",
                "s.yaml:8:15: test 'u': tx_depth 0 is out of range; use 1-4096"}));
}

// The QPs' ACK timeout, as verbs' exponent (NCCL_IB_TIMEOUT's number): read from a test, a
// default or a part; refused out of range, and with engine perftest, at its line.
TEST(Suite, AckTimeoutIsVerbsExponent) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ndefaults: {ack_timeout: 18}\ntests:\n  - name: a\n"
      "    workload: bw\n  - name: b\n    workload: allreduce\n    ack_timeout: 10\n"
      "  - name: p\n    parts:\n      - {name: q, workload: bw, hosts: 'h1,h2', ack_timeout: "
      "12}\n");
  EXPECT_EQ(s.tests[0].settings.ack_timeout, 18);
  EXPECT_EQ(s.tests[1].settings.ack_timeout, 10);
  EXPECT_EQ(s.tests[2].parts.at(0).settings.ack_timeout, 12);
  EXPECT_EQ(parsed_suite("schema_version: 1\nname: x\ntests:\n  - name: d\n    workload: bw\n")
                .tests[0]
                .settings.ack_timeout,
            14);
  EXPECT_EQ(ack_timeout_us(14), 67108u);  // verbs' 14, rocehil's default
  EXPECT_EQ(ack_timeout_us(18), 1073741u);
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: u\n    workload: bw\n"
                      "    ack_timeout: 0\n  - name: v\n    workload: bw\n    engine: perftest\n"
                      "    ack_timeout: 16\n"),
            (std::vector<std::string>{
                "s.yaml:6:18: test 'u': ack_timeout 0 is out of range; use 1-23",
                "s.yaml:10:18: test 'v': ack_timeout sets rocehil's own QPs; perftest keeps its "
                "own (its -u, not passed yet): drop ack_timeout or use engine rocehil"}));
}

TEST(Suite, GpuMemoryIsForPointToPointTests) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: g\n    workload: bw\n    memory: gpu\n"
      "  - name: h\n    workload: lat\n");
  EXPECT_EQ(s.tests[0].settings.memory, "gpu");
  EXPECT_EQ(s.tests[1].settings.memory, "host");
  EXPECT_EQ(errors_of("schema_version: 1\nname: x\ntests:\n  - name: g\n"
                      "    workload: allreduce\n    memory: gpu\n"),
            (std::vector<std::string>{"s.yaml:6:13: test 'g': memory gpu needs workload bw or lat "
                                      "(a collective checks its data in host memory)"}));
}

TEST(Suite, ThePerftestEngineRunsBwAndLatWithPerftestsOwnTests) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ndefaults:\n  engine: perftest\ntests:\n"
      "  - name: w\n    workload: bw\n    opcode: read\n  - name: l\n    workload: lat\n"
      "  - name: r\n    workload: bw\n    engine: rocehil\n");
  EXPECT_EQ(s.tests[0].settings.engine, "perftest");
  EXPECT_EQ(s.tests[1].settings.engine, "perftest");
  EXPECT_EQ(s.tests[2].settings.engine, "rocehil");
  EXPECT_EQ(parsed_suite("schema_version: 1\nname: x\ntests:\n  - name: d\n    workload: bw\n")
                .tests[0]
                .settings.engine,
            "rocehil");
  EXPECT_EQ(
      errors_of("schema_version: 1\nname: x\ntests:\n  - name: a\n    workload: allreduce\n"
                "    engine: perftest\n  - name: b\n    workload: bw\n    engine: perftest\n"
                "    opcode: write_with_imm\n    memory: gpu\n  - name: c\n    workload: lat\n"
                "    engine: perftest\n    iterations: 4\n  - name: d\n    workload: bw\n"
                "    engine: ib_write_bw\n"),
      (std::vector<std::string>{
          "s.yaml:6:13: test 'a': engine perftest runs workload bw or lat, not allreduce "
          "(perftest has no collectives)",
          "s.yaml:10:13: test 'b': perftest has no WRITE_WITH_IMM bandwidth test; use opcode "
          "write, read or send, or engine rocehil",
          "s.yaml:11:13: test 'b': memory gpu with engine perftest needs a perftest built with "
          "CUDA (--use_cuda), which Debian's is not; use engine rocehil",
          "s.yaml:15:17: test 'c': perftest runs at least 5 iterations, got 4",
          "s.yaml:18:13: test 'd': engine 'ib_write_bw' is not one of rocehil, perftest; use one "
          "of them"}));
}

TEST(Suite, ACalibrationIsBwOrLatWithBothEnginesInRounds) {
  const Suite s = parsed_suite(
      "schema_version: 1\nname: x\ntests:\n  - name: cb\n    workload: calibrate_bw\n"
      "    size: [4K, 1M]\n    rounds: 5\n  - name: cl\n    workload: calibrate_lat\n");
  EXPECT_TRUE(is_point_to_point(s.tests[0]));
  EXPECT_TRUE(is_calibration(s.tests[1]));
  EXPECT_EQ(measured_workload(s.tests[0]), "bw");
  EXPECT_EQ(measured_workload(s.tests[1]), "lat");
  EXPECT_EQ(s.tests[0].settings.rounds, 5);
  EXPECT_EQ(s.tests[1].settings.rounds, 3);
  EXPECT_EQ(expand(s).size(), 3u);
  EXPECT_EQ(
      errors_of("schema_version: 1\nname: x\ntests:\n  - name: a\n    workload: calibrate_bw\n"
                "    engine: perftest\n    opcode: write_with_imm\n  - name: b\n"
                "    workload: calibrate_lat\n    qps: 2\n    rounds: 0\n"),
      (std::vector<std::string>{
          "s.yaml:6:13: test 'a': calibrate_bw runs both engines in turn; drop engine",
          "s.yaml:7:13: test 'a': perftest has no WRITE_WITH_IMM bandwidth test; use opcode "
          "write, read or send, or engine rocehil",
          "s.yaml:10:10: test 'b': lat pings over one QP; drop qps",
          "s.yaml:11:13: test 'b': rounds 0 is out of range; use 1-20"}));
}

TEST(Suite, SizesReadAndPrintAsPeopleWriteThem) {
  EXPECT_EQ(parse_size("65536"), 65536u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("1G"), 1u << 30);
  EXPECT_EQ(parse_size("1T"), std::uint64_t{1} << 40);  // a bw volume (bytes:)
  EXPECT_FALSE(parse_size("1P").has_value());
  EXPECT_FALSE(parse_size("-1").has_value());
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("99999999999999999999G").has_value());
  EXPECT_EQ(size_label(65536), "64K");
  EXPECT_EQ(size_label(1000), "1000");
  EXPECT_EQ(size_label(3u << 20), "3M");
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Suite, TheDocsCarryTheSmokeSuiteVerbatim) {
  const std::string doc = read(std::string(ROCEHIL_DOCS_DIR) + "/suites.md");
  const std::string smoke = read(std::string(ROCEHIL_SUITES_DIR) + "/smoke.yaml");
  ASSERT_FALSE(smoke.empty());
  EXPECT_NE(doc.find(smoke), std::string::npos) << "docs/suites.md must quote suites/smoke.yaml";
}

// How a metric is written, with the indexes it takes.
std::string metric_cell(const MetricInfo& m) {
  const std::string name(m.name);
  switch (m.index) {
    case Index::none: return "`" + name + "`";
    case Index::priority: return "`" + name + "[p]`";
    case Index::total_or_priority: return "`" + name + "`, `" + name + "[p]`";
    case Index::total_or_dscp: return "`" + name + "`, `" + name + "[dscp=d]`";
  }
  return name;
}

// The metric table of docs/metrics.md is the catalogue, row for row, with where each metric comes
// from per provider; on a mismatch the expected table is printed to paste in.
TEST(Suite, TheDocsMetricTableIsTheCatalogue) {
  const std::string doc = read(std::string(ROCEHIL_DOCS_DIR) + "/metrics.md");
  std::string table = "| metric | unit | meaning | soft | verbs |\n|---|---|---|---|---|\n";
  for (const MetricInfo& m : known_metrics())
    table += "| " + metric_cell(m) + " | " + std::string(m.unit) + " | " + std::string(m.meaning) +
             " | " + std::string(m.on_soft) + " | " + std::string(m.on_verbs) + " |\n";
  EXPECT_NE(doc.find(table), std::string::npos) << "docs/metrics.md must hold:\n" << table;
}

}  // namespace
}  // namespace rocehil::suites
