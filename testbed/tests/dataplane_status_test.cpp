// `testbed status` of a --lossless testbed: each switch's counters as its forwarding process
// wrote them to its file, summed for the one-line view, and absent with the reason (never 0)
// when the file cannot be read.
#include <gtest/gtest.h>

#include <filesystem>

#include "dataplane/shared_counters.hpp"
#include "lifecycle/dataplane_status.hpp"
#include "rocehil/testbed/status_json.hpp"

namespace rocehil::testbed {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "dataplane_status_test";
  fs::create_directories(dir);
  fs::remove(dir + "/" + name);
  return dir + "/" + name;
}

// A healthy one-switch testbed but for what `dataplane` says.
StatusResult one_switch(std::optional<DataplaneStatus> dataplane) {
  StatusResult s;
  s.phase = "up";
  s.bridge_exists = true;
  s.lossless = true;
  NamespaceStatus l1;
  l1.spec.name = "l1";
  l1.spec.netns = "rocehil-t1-l1";
  l1.spec.role = Role::leaf;
  l1.exists = true;
  l1.dataplane = std::move(dataplane);
  s.namespaces.push_back(std::move(l1));
  return s;
}

TEST(DataplaneStatus, EverySwitchCounterReachesStatusJson) {
  const std::string path = temp_path("l1.counters");
  dataplane::SharedCountersWriter w(path, {"t1-h1", "t1-s1"});
  auto& h1 = w.port(0);
  auto& s1 = w.port(1);
  dataplane::bump(h1.forwarded, 1000);
  dataplane::bump(s1.forwarded, 500);
  dataplane::bump(h1.no_route, 2);
  dataplane::bump(s1.ttl_expired, 1);
  dataplane::bump(s1.socket_drops, 4);
  dataplane::bump(h1.queue[3].ecn_marked, 40);
  dataplane::bump(s1.queue[3].ecn_marked, 2);
  dataplane::bump(h1.queue[0].dropped, 7);
  dataplane::bump(h1.queue[0].dropped_bytes, 7000);
  dataplane::bump(s1.queue[3].peak_depth_bytes, 250'000);
  dataplane::bump(h1.priority[3].pfc_sent, 11);
  dataplane::bump(s1.priority[4].pfc_sent, 3);
  dataplane::bump(s1.priority[3].pfc_received, 5);
  dataplane::bump(h1.priority[3].paused_ns, 123'456);
  dataplane::bump(s1.priority[4].lossless_drops, 1);
  dataplane::bump(h1.priority[3].storms_detected, 2);
  dataplane::bump(h1.priority[3].storm_drops, 30);

  const StatusResult s = one_switch(read_dataplane_status(path));
  ASSERT_TRUE(s.namespaces[0].dataplane->ports);
  EXPECT_TRUE(s.healthy());
  const nlohmann::json j = status_json(s);
  EXPECT_TRUE(j["lossless"].get<bool>());
  const nlohmann::json& d = j["namespaces"][0]["dataplane"];
  EXPECT_EQ(d["counters_file"], path);
  EXPECT_TRUE(d["problem"].is_null());
  EXPECT_EQ(d["totals"], nlohmann::json::parse(R"({"forwarded": 1500, "pfc_sent": 14,
      "pfc_received": 5, "ecn_marked": 42, "queue_drops": 7, "forwarding_drops": 3,
      "socket_drops": 4, "lossless_drops": 1, "storms_detected": 2, "storm_drops": 30})"));
  ASSERT_EQ(d["ports"].size(), 2u);
  const nlohmann::json& p0 = d["ports"][0];
  const nlohmann::json& p1 = d["ports"][1];
  EXPECT_EQ(p0["name"], "t1-h1");
  EXPECT_EQ(p1["name"], "t1-s1");
  EXPECT_EQ(p0["no_route"], 2);
  EXPECT_EQ(p1["ttl_expired"], 1);
  EXPECT_EQ(p1["socket_drops"], 4);
  EXPECT_EQ(p0["socket_drops"], 0);
  ASSERT_EQ(p0["queues"].size(), 8u);
  ASSERT_EQ(p0["priorities"].size(), 8u);
  EXPECT_EQ(p0["queues"][0], nlohmann::json::parse(R"({"class": 0, "packets": 0, "bytes": 0,
      "dropped": 7, "dropped_bytes": 7000, "ecn_marked": 0, "depth_bytes": 0,
      "peak_depth_bytes": 0})"));
  EXPECT_EQ(p1["queues"][3]["peak_depth_bytes"], 250'000);
  EXPECT_EQ(p0["priorities"][3], nlohmann::json::parse(R"({"priority": 3, "pfc_sent": 11,
      "pfc_received": 0, "xon_sent": 0, "xon_received": 0, "paused_ns": 123456,
      "ingress_bytes": 0, "peak_ingress_bytes": 0, "lossless_drops": 0, "storms_detected": 2,
      "storms_restored": 0, "storm_drops": 30})"));
  EXPECT_EQ(p1["priorities"][4]["lossless_drops"], 1);
}

TEST(DataplaneStatus, AMissingFileIsAbsentWithTheReasonNotZero) {
  const std::string path = temp_path("gone.counters");
  const DataplaneStatus d = read_dataplane_status(path);
  EXPECT_FALSE(d.ports);
  EXPECT_NE(d.problem.find(path), std::string::npos) << d.problem;
  const StatusResult s = one_switch(d);
  EXPECT_FALSE(s.healthy());  // the switch's forwarding process never made its file
  const nlohmann::json j = status_json(s)["namespaces"][0]["dataplane"];
  EXPECT_TRUE(j["ports"].is_null());
  EXPECT_TRUE(j["totals"].is_null());
  EXPECT_EQ(j["problem"], d.problem);
}

TEST(DataplaneStatus, ANormalTestbedHasNoDataplane) {
  StatusResult s = one_switch(std::nullopt);
  s.lossless = false;
  EXPECT_TRUE(s.healthy());
  const nlohmann::json j = status_json(s);
  EXPECT_FALSE(j["lossless"].get<bool>());
  EXPECT_FALSE(j["namespaces"][0].contains("dataplane"));
}

}  // namespace
}  // namespace rocehil::testbed
