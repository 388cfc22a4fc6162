// rocehil selftest's checks, read from run.json documents shaped as reports::to_json writes them
// (the keys of reports/src/run_json.cpp: cases[].outcome, attempts[].error, metrics, grade,
// raw.captures[].analysis.flows; inventory.preflight.hosts[].verdict).
#include "rocehil/run/selftest.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "rocehil/common/error.hpp"
#include "rocehil/run/selftest_run.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {
namespace {

using nlohmann::json;

json passing_case(const std::string& test, json metrics, json thresholds = json::array()) {
  return {{"test", test},
          {"id", test},
          {"outcome", "pass"},
          {"parameters", {{"qps", test == "qp_scaling" ? 8 : 1}}},
          {"attempts",
           {{{"error", nullptr},
             {"metrics", std::move(metrics)},
             {"grade", {{"verdict", "pass"}, {"thresholds", std::move(thresholds)}}},
             {"raw", json::object()}}}}};
}

json threshold(const std::string& text, const std::string& verdict, json measured,
               const std::string& detail = "") {
  return {{"threshold", text}, {"verdict", verdict}, {"measured", measured}, {"detail", detail}};
}

// Flows of QPs 0..qps-1 as a mirror lists them, each from the port its QP was pinned to.
json flows(int qps, int first_port = 50000) {
  json out = json::array();
  for (int q = 0; q < qps; ++q)
    out.push_back({{"src", "198.18.1.11"},
                   {"dst", "198.18.2.11"},
                   {"dest_qp", 0x100 + q},
                   {"packets", 10},
                   {"udp_sport", first_port + q}});
  return out;
}

// The collective's raw report: two ranks, 8 QPs each, pinned to 50000..50015.
json pinned_traffic() {
  json ranks = json::array();
  for (int r = 0; r < 2; ++r) {
    json qps = json::array();
    for (int q = 0; q < 8; ++q)
      qps.push_back({{"qpn", 0x100 + 8 * r + q}, {"udp_sport", 50000 + 8 * r + q}});
    ranks.push_back({{"rank", r}, {"per_qp", qps}});
  }
  return {{"cases", {{{"per_rank", ranks}}}}};
}

// A run of the acceptance suite's first tests as a verbs pair's could be: everything passed but
// ecn_cnp, whose NIC counter was not measured.
json base_run() {
  const json bw = {{"busbw_gbps", 0.27}, {"data_errors", 0}, {"errors", 0}};
  json qp = passing_case("qp_scaling", bw);
  qp["attempts"][0]["raw"]["captures"] = {
      {{"point", "s1-mirror"}, {"analysis", {{"flows", flows(5)}}}},
      {{"point", "s2-mirror"}, {"analysis", {{"flows", json::array()}}}}};
  qp["attempts"][0]["raw"]["captures"][1]["analysis"]["flows"] = flows(8);
  qp["attempts"][0]["raw"]["traffic"] = pinned_traffic();
  json cnp = passing_case("ecn_cnp", {{"data_errors", 0}, {"cnps", 2585}},
                          {threshold("data_errors == 0", "pass", 0),
                           threshold("nic_cnps_sent > 0", "error", nullptr,
                                     "nic_cnps_sent was not measured: h1 nic0 has no counter "
                                     "hw_counters/np_cnp_sent")});
  cnp["outcome"] = "error";
  return {{"inventory",
           {{"preflight",
             {{"hosts",
               {{{"name", "h1"}, {"verdict", "soft only"}, {"ssh_ms", 12.0}},
                {{"name", "h3"}, {"verdict", "soft only"}, {"ssh_ms", 9.0}}}}}}}},
          {"cases",
           {passing_case("rc_write", bw), passing_case("rc_read", bw), passing_case("rc_send", bw),
            passing_case("latency", {{"lat_p50_us", 23.5}, {"lat_p99_us", 2032}}), qp, cnp}}};
}

SelftestSetup soft_pair() {
  return {.hosts = {"h1", "h3"},
          .providers = {"soft", "soft"},
          .gpus = {false, false},
          .captures = {"s1-mirror", "s2-mirror"}};
}

// A run of the acceptance suite on a soft pair in which everything it can do passed: the tests it
// cannot take skipped by the run, as run_selftest asks (their cases listed with the reason).
json soft_run() {
  json run = base_run();
  json kept = json::array();
  for (const auto& c : run["cases"])
    if (c["test"] != "ecn_cnp") kept.push_back(c);
  run["cases"] = kept;
  for (const PairLimit& limit : tests_the_pair_cannot_take(soft_pair()))
    run["cases"].push_back({{"test", limit.test},
                            {"id", limit.test},
                            {"outcome", "skipped"},
                            {"skip_reason", limit.reason},
                            {"attempts", json::array()}});
  run["exit_code"] = 0;
  return run;
}

SelftestSetup verbs_pair() {
  SelftestSetup s = soft_pair();
  s.providers = {"verbs", "verbs"};
  s.gpus = {true, true};
  return s;
}

const SelftestCheck& check(const SelftestReport& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check " << name;
  return r.checks.front();
}

json& case_of(json& run, const std::string& test) {
  for (auto& c : run["cases"])
    if (c["test"] == test) return c;
  throw std::logic_error("no case " + test);
}

TEST(Selftest, ASoftPairPassesWhatItCanAndSkipsTheHardwareWithReasons) {
  const SelftestReport r = evaluate_selftest(soft_run(), soft_pair());
  std::vector<std::string> names;
  for (const auto& c : r.checks) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"preflight", "rc_write", "rc_read", "rc_send",
                                             "ud_send", "latency", "qp_scaling", "ecn_cnp",
                                             "gpu_memory", "calibration"}));
  EXPECT_EQ(check(r, "preflight").verdict, CheckVerdict::pass);
  EXPECT_EQ(check(r, "preflight").detail, "h1 soft only (12 ms), h3 soft only (9 ms)");
  EXPECT_EQ(check(r, "rc_read").verdict, CheckVerdict::pass);
  EXPECT_EQ(check(r, "rc_read").detail,
            "0.27 Gbit/s, 0 data errors (every byte compared with what was sent)");
  EXPECT_EQ(check(r, "latency").detail, "p50 23.5 us, p99 2032 us");
  for (const char* hw : {"ud_send", "ecn_cnp", "calibration"}) {
    EXPECT_EQ(check(r, hw).verdict, CheckVerdict::skip) << hw;
    EXPECT_NE(check(r, hw).detail.find("hardware check"), std::string::npos) << hw;
  }
  EXPECT_NE(check(r, "ecn_cnp").detail.find("hw_counters/np_cnp_sent"), std::string::npos);
  EXPECT_NE(check(r, "gpu_memory").detail.find("does not pair a GPU"), std::string::npos);
  EXPECT_EQ(check(r, "calibration").detail,
            "hardware check: perftest needs an RDMA device, and h1 and h3 have none");
  EXPECT_EQ(r.verdict, CheckVerdict::pass);  // skipped checks are listed, not failed
  EXPECT_EQ(r.exit_code(), 0);
}

// What the checklist skips is what the run skipped, with the run's words: every file agrees.
TEST(Selftest, ASkippedCheckIsACaseTheRunSkippedWithTheSameReason) {
  json run = soft_run();
  const SelftestReport r = evaluate_selftest(run, soft_pair());
  std::set<std::string> skipped_cases, skipped_checks;
  for (const auto& c : run["cases"])
    if (c["outcome"] == "skipped") skipped_cases.insert(c["test"].get<std::string>());
  for (const auto& c : r.checks)
    if (c.verdict == CheckVerdict::skip) {
      skipped_checks.insert(c.test);
      EXPECT_EQ(c.detail, case_of(run, c.test)["skip_reason"]) << c.name;
    }
  skipped_checks.insert("calibration_lat");  // one check reads both calibration tests
  EXPECT_EQ(skipped_checks, skipped_cases);
  EXPECT_EQ(r.exit_code(), run["exit_code"].get<int>());
  // A verbs pair with GPUs can take them all.
  EXPECT_TRUE(tests_the_pair_cannot_take(verbs_pair()).empty());
}

// A run that exited worse than its checks say (here: a case the checks do not read errored) makes
// the checklist say so, so `selftest: PASS` never sits beside a run.json with exit_code 3.
TEST(Selftest, NeverReadsBetterThanTheRunItself) {
  json run = soft_run();
  run["exit_code"] = 3;
  run["summary"]["text"] = "6 passed, 1 could not be measured";
  const SelftestReport r = evaluate_selftest(run, soft_pair());
  EXPECT_EQ(r.verdict, CheckVerdict::error);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(r.checks.back().name, "run");
  EXPECT_EQ(r.checks.back().detail,
            "the run exited 3 (6 passed, 1 could not be measured): see run.json");
  run["exit_code"] = 1;
  EXPECT_EQ(evaluate_selftest(run, soft_pair()).exit_code(), 1);
  run["exit_code"] = 0;
  EXPECT_EQ(evaluate_selftest(run, soft_pair()).checks.size(), 10u);
}

TEST(Selftest, QpScalingLooksForThePinnedSourcePortsOnTheMirrors) {
  const SelftestReport r = evaluate_selftest(soft_run(), soft_pair());
  EXPECT_EQ(check(r, "qp_scaling").verdict, CheckVerdict::pass);
  EXPECT_NE(check(r, "qp_scaling")
                .detail.find("the mirrors saw 8 of the 16 pinned source ports and no other; flows "
                             "per mirror: s1-mirror 5, s2-mirror 8"),
            std::string::npos)
      << check(r, "qp_scaling").detail;

  json run = soft_run();
  auto& captures = case_of(run, "qp_scaling")["attempts"][0]["raw"]["captures"];
  captures[1]["analysis"]["flows"] = flows(3);
  const SelftestCheck few = check(evaluate_selftest(run, soft_pair()), "qp_scaling");
  EXPECT_EQ(few.verdict, CheckVerdict::fail);
  EXPECT_NE(few.detail.find("8 QPs ran but the mirrors saw 5 of their 16 pinned source ports"),
            std::string::npos)
      << few.detail;

  captures[1]["analysis"]["flows"] = flows(8);
  captures[0]["analysis"]["flows"][2]["udp_sport"] = 61234;  // the NIC picked its own
  const SelftestCheck stray = check(evaluate_selftest(run, soft_pair()), "qp_scaling");
  EXPECT_EQ(stray.verdict, CheckVerdict::fail);
  EXPECT_NE(stray.detail.find("source ports the QPs were not pinned to (61234)"), std::string::npos)
      << stray.detail;

  case_of(run, "qp_scaling")["attempts"][0]["raw"].erase("traffic");
  const SelftestCheck unpinned = check(evaluate_selftest(run, soft_pair()), "qp_scaling");
  EXPECT_EQ(unpinned.verdict, CheckVerdict::error);
  // As on rxe, whose QPs the agent leaves to the NIC's own ports: the reason, never a pass.
  EXPECT_NE(unpinned.detail.find("the NIC chose the ports (pinning them needs mlx5 direct verbs"),
            std::string::npos)
      << unpinned.detail;

  SelftestSetup no_mirrors = soft_pair();
  no_mirrors.captures.clear();
  const SelftestCheck unseen = check(evaluate_selftest(run, no_mirrors), "qp_scaling");
  EXPECT_EQ(unseen.verdict, CheckVerdict::pass);
  EXPECT_NE(unseen.detail.find("give --captures"), std::string::npos);
}

TEST(Selftest, FailuresErrorsAndCasesNotRunSayWhy) {
  json run = soft_run();
  json& write = case_of(run, "rc_write");
  write["outcome"] = "fail";
  write["attempts"][0]["grade"]["thresholds"] = {threshold("data_errors == 0", "fail", 3),
                                                 threshold("busbw_gbps > 0", "pass", 0.2)};
  json& read = case_of(run, "rc_read");
  read["outcome"] = "error";
  read["attempts"][0]["error"] = {
      {"host", "h3"}, {"phase", "setup"}, {"message", "ibv_modify_qp(INIT->RTR) failed"}};
  json& send = case_of(run, "rc_send");
  send["outcome"] = "not_run";
  send["attempts"] = json::array();
  const SelftestReport r = evaluate_selftest(run, soft_pair());
  EXPECT_EQ(check(r, "rc_write").verdict, CheckVerdict::fail);
  EXPECT_EQ(check(r, "rc_write").detail, "data_errors == 0 (measured 3)");
  EXPECT_EQ(check(r, "rc_read").verdict, CheckVerdict::error);
  EXPECT_EQ(check(r, "rc_read").detail, "host h3, phase setup: ibv_modify_qp(INIT->RTR) failed");
  EXPECT_EQ(check(r, "rc_send").verdict, CheckVerdict::skip);
  EXPECT_EQ(r.verdict, CheckVerdict::fail);  // a failure outranks what could not be decided
  EXPECT_EQ(r.exit_code(), 1);

  write["outcome"] = "pass";
  EXPECT_EQ(evaluate_selftest(run, soft_pair()).exit_code(), 3);
}

TEST(Selftest, AnUnreachableHostIsAnErrorAsTheRunsExitStatusSays) {
  json run = soft_run();
  run["inventory"]["preflight"]["hosts"][1] = {
      {"name", "h3"},
      {"verdict", "unreachable"},
      {"unreachable", "ssh: connect to host 198.19.0.13 port 22: No route to host"}};
  const SelftestCheck c = check(evaluate_selftest(run, soft_pair()), "preflight");
  EXPECT_EQ(c.verdict, CheckVerdict::error);
  EXPECT_NE(c.detail.find("h3 unreachable: ssh: connect"), std::string::npos) << c.detail;
  json none = soft_run();
  none["inventory"].erase("preflight");
  EXPECT_EQ(check(evaluate_selftest(none, soft_pair()), "preflight").verdict, CheckVerdict::error);
}

TEST(Selftest, OnVerbsTheNicsCnpCounterDecides) {
  json run = base_run();
  auto& thresholds = case_of(run, "ecn_cnp")["attempts"][0]["grade"]["thresholds"];
  thresholds[1] = threshold("nic_cnps_sent > 0", "pass", 412);
  EXPECT_EQ(check(evaluate_selftest(run, verbs_pair()), "ecn_cnp").detail,
            "the NICs sent 412 CNPs (np_cnp_sent)");
  thresholds[1] = threshold("nic_cnps_sent > 0", "fail", 0);
  const SelftestCheck none = check(evaluate_selftest(run, verbs_pair()), "ecn_cnp");
  EXPECT_EQ(none.verdict, CheckVerdict::fail);
  EXPECT_NE(none.detail.find("roce_np"), std::string::npos);
  thresholds[1] =
      threshold("nic_cnps_sent > 0", "error", nullptr, "h1 mlx5_0 has no counter np_cnp_sent");
  const SelftestCheck missing = check(evaluate_selftest(run, verbs_pair()), "ecn_cnp");
  EXPECT_EQ(missing.verdict, CheckVerdict::error);  // a real NIC without the counter: undecided
  EXPECT_EQ(missing.detail, "h1 mlx5_0 has no counter np_cnp_sent");
}

TEST(Selftest, OnVerbsUdSendIsItsCase) {
  json run = base_run();
  EXPECT_EQ(check(evaluate_selftest(run, verbs_pair()), "ud_send").verdict, CheckVerdict::error)
      << "no ud_send case in the run";
  run["cases"].push_back(passing_case("ud_send", {{"busbw_gbps", 12.5}, {"data_errors", 0}}));
  const SelftestCheck ud = check(evaluate_selftest(run, verbs_pair()), "ud_send");
  EXPECT_EQ(ud.verdict, CheckVerdict::pass);
  EXPECT_EQ(ud.detail, "12.5 Gbit/s, 0 data errors (every byte compared with what was sent)");
  // On soft the run skips the case (RC only), and the check says the run's reason.
  const SelftestCheck soft = check(evaluate_selftest(soft_run(), soft_pair()), "ud_send");
  EXPECT_EQ(soft.verdict, CheckVerdict::skip);
  EXPECT_EQ(soft.detail,
            "hardware check: h1 and h3 use the soft provider, which implements RC only");
}

TEST(Selftest, GpuMemoryIsItsCaseWhenBothHostsHaveAGpu) {
  json run = base_run();
  run["cases"].push_back(passing_case("gpu_memory", {{"busbw_gbps", 180.0}, {"data_errors", 0}}));
  const SelftestCheck gpu = check(evaluate_selftest(run, verbs_pair()), "gpu_memory");
  EXPECT_EQ(gpu.verdict, CheckVerdict::pass);
  EXPECT_EQ(gpu.detail,
            "180 Gbit/s, 0 data errors (every byte compared with what was sent), registration "
            "not reported");
  json& g = case_of(run, "gpu_memory");
  // The path that passed, as each side's agent reported it in its results.
  json& traffic = g["attempts"][0]["raw"]["traffic"];
  traffic["client"]["results"] = {{"gpu_registration", "dma-buf"}};
  traffic["server"]["results"] = {{"gpu_registration", "dma-buf"}};
  EXPECT_EQ(check(evaluate_selftest(run, verbs_pair()), "gpu_memory").detail,
            "180 Gbit/s, 0 data errors (every byte compared with what was sent), through dma-buf "
            "on both hosts");
  traffic["server"]["results"]["gpu_registration"] = "peer memory";
  EXPECT_NE(check(evaluate_selftest(run, verbs_pair()), "gpu_memory")
                .detail.find("client through dma-buf, server through peer memory"),
            std::string::npos);
  g["outcome"] = "error";
  g["attempts"][0]["error"] = {
      {"host", "h3"},
      {"phase", "traffic"},
      {"message",
       "agent on h3 refused setup: cannot register 131072 bytes of GPU 0 memory with mlx5_0: "
       "dma-buf: ibv_reg_dmabuf_mr: Operation not supported; ibv_reg_mr of the device pointer: "
       "Bad address (load nvidia-peermem, ...)"}};
  // The run errored (exit status 3): the check is undecided too, and says what to look at.
  const SelftestCheck refused = check(evaluate_selftest(run, verbs_pair()), "gpu_memory");
  EXPECT_EQ(refused.verdict, CheckVerdict::error);
  EXPECT_NE(refused.detail.find("no way to register GPU memory on this host: host h3"),
            std::string::npos)
      << refused.detail;
  g["attempts"][0]["error"]["message"] = "agent on h3 stopped answering";
  EXPECT_EQ(check(evaluate_selftest(run, verbs_pair()), "gpu_memory").verdict, CheckVerdict::error);

  const auto limit_on = [](const SelftestSetup& setup, const std::string& test) {
    for (const PairLimit& l : tests_the_pair_cannot_take(setup))
      if (l.test == test) return l.reason;
    return std::string("(none)");
  };
  SelftestSetup one_gpu = verbs_pair();
  one_gpu.gpus = {true, false};
  EXPECT_FALSE(pair_has_gpus(one_gpu));
  EXPECT_NE(limit_on(one_gpu, "gpu_memory").find("both hosts' NICs"), std::string::npos);
  EXPECT_EQ(limit_on(one_gpu, "ud_send"), "(none)");
  SelftestSetup soft_gpus = soft_pair();
  soft_gpus.gpus = {true, true};
  EXPECT_NE(limit_on(soft_gpus, "gpu_memory").find("hardware check"), std::string::npos);
}

TEST(Selftest, CalibrationIsTheWorseOfBandwidthAndLatencyAgreement) {
  json run = base_run();
  run["cases"].push_back(passing_case("calibration_bw", {{"calibration_rocehil", 92.1},
                                                         {"calibration_perftest", 92.4},
                                                         {"calibration_ratio", 0.9968}}));
  json lat = passing_case(
      "calibration_lat",
      {{"calibration_rocehil", 2.41}, {"calibration_perftest", 1.98}, {"calibration_ratio", 1.217}},
      // json::array: on clang a braced list of one json is that json, not an array of it.
      json::array({threshold("calibration_ratio <= 1.1", "fail", 1.217,
                             "calibration_ratio = 1.217, needs <= 1.1")}));
  lat["outcome"] = "fail";
  run["cases"].push_back(lat);
  const SelftestCheck failed = check(evaluate_selftest(run, verbs_pair()), "calibration");
  EXPECT_EQ(failed.verdict, CheckVerdict::fail);
  EXPECT_EQ(failed.detail,
            "bw: rocehil 92.1 Gbit/s, perftest 92.4 (ratio 0.9968); lat: calibration_ratio <= 1.1 "
            "(measured 1.217): calibration_ratio = 1.217, needs <= 1.1");
  run["cases"].back() = passing_case("calibration_lat", {{"calibration_rocehil", 2.0},
                                                         {"calibration_perftest", 1.98},
                                                         {"calibration_ratio", 1.0101}});
  const SelftestCheck passed = check(evaluate_selftest(run, verbs_pair()), "calibration");
  EXPECT_EQ(passed.verdict, CheckVerdict::pass);
  EXPECT_NE(passed.detail.find("lat: rocehil 2 us p50, perftest 1.98 (ratio 1.01)"),
            std::string::npos)
      << passed.detail;
  // Without the cases (a suite without them) it cannot be told: an error, never a pass.
  const SelftestCheck missing = check(evaluate_selftest(base_run(), verbs_pair()), "calibration");
  EXPECT_EQ(missing.verdict, CheckVerdict::error);
  EXPECT_NE(missing.detail.find("no case of test 'calibration_bw'"), std::string::npos);
}

TEST(Selftest, TheBuiltInSuiteLoadsAndHoldsEveryTestTheChecksRead) {
  const std::string text = instantiate_acceptance_suite(acceptance_suite_template(), {"h1", "h3"},
                                                        {"s1-mirror", "s2-mirror"});
  EXPECT_EQ(text.find('$'), std::string::npos);
  const suites::SuiteLoadResult loaded = suites::parse_suite(text, "acceptance.yaml");
  ASSERT_TRUE(loaded.suite) << (loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].message);
  std::set<std::string> tests;
  for (const auto& t : loaded.suite->tests) tests.insert(t.name);
  for (const auto& c : evaluate_selftest(json::object(), soft_pair()).checks)
    if (!c.test.empty()) {
      EXPECT_TRUE(tests.count(c.test)) << c.test;
    }
  EXPECT_TRUE(
      suites::parse_suite(instantiate_acceptance_suite(acceptance_suite_template(), {"a", "b"}, {}),
                          "acceptance.yaml")
          .suite);
}

TEST(Selftest, NamesThatCouldBreakOutOfTheSuiteAreRefused) {
  EXPECT_THROW(instantiate_acceptance_suite(acceptance_suite_template(), {"h1', x: '"}, {}), Error);
  EXPECT_THROW(instantiate_acceptance_suite(acceptance_suite_template(), {"h1"}, {"m]\n"}), Error);
  EXPECT_THROW(instantiate_acceptance_suite("tests: []", {"h1", "h3"}, {}), Error);
}

TEST(Selftest, TheFileToAttachHoldsTheChecksTheSetupAndTheRun) {
  const json run = soft_run();
  const json file = selftest_json(evaluate_selftest(run, soft_pair()), soft_pair(), run);
  EXPECT_EQ(file["schema_version"], 1);
  EXPECT_EQ(file["verdict"], "pass");
  EXPECT_EQ(file["checks"].size(), 10u);
  EXPECT_EQ(file["skipped"], 4);
  EXPECT_EQ(file["hosts"][1]["provider"], "soft");
  EXPECT_EQ(file["run"], run);
}

// Hosts and capture points are held to the inventory before anything is written or run.
TEST(SelftestRun, RefusesAPairTheInventoryDoesNotHave) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("rocehil-selftest-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "inventory.yaml") << R"(schema_version: 1
name: here
defaults: {launcher: local, provider: soft}
hosts:
  - {name: a, address: 127.0.0.1, nics: [{netdev: lo, ip: 127.0.0.1}]}
  - {name: b, address: 127.0.0.2, nics: [{netdev: lo, ip: 127.0.0.2}]}
)";
  const auto refusal = [&](std::vector<std::string> hosts, std::vector<std::string> captures) {
    SelftestOptions o;
    o.inventory_file = (dir / "inventory.yaml").string();
    o.hosts = std::move(hosts);
    o.captures = std::move(captures);
    o.reports_dir = (dir / "reports").string();
    const std::atomic<bool> interrupt{false};
    RunEvents silent;
    try {
      run_selftest(o, interrupt, silent);
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("(ran)");
  };
  EXPECT_NE(refusal({"a", "a"}, {}).find("--hosts 'a,a': give two different hosts"),
            std::string::npos);
  EXPECT_NE(refusal({"a", "c"}, {}).find("has no host 'c'"), std::string::npos);
  EXPECT_NE(refusal({"a", "b"}, {"spine1"}).find("has no capture point 'spine1'"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "reports"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rocehil::run
