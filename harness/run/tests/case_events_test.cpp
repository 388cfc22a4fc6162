// A case's device events: listed in time order with their host, and a port that went down names
// its host as the one to blame when the case failed.
#include "cases/case_events.hpp"

#include <gtest/gtest.h>

namespace rocehil::run::case_traffic {
namespace {

std::vector<HostEvent> flap() {
  return {{"h3", {.at_ns = 300, .device = "mlx5_0", .kind = "port_active", .detail = "port 1"}},
          {"h1", {.at_ns = 100, .device = "mlx5_0", .kind = "qp_fatal", .detail = "QP 0x11"}},
          {"h3", {.at_ns = 200, .device = "mlx5_0", .kind = "port_error", .detail = "port 1"}}};
}

TEST(CaseEvents, ListedOldestFirstWithTheirHost) {
  const nlohmann::json j = device_events_json(flap());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["host"], "h1");
  EXPECT_EQ(j[0]["kind"], "qp_fatal");
  EXPECT_EQ(j[1]["at_ns"], 200);
  EXPECT_EQ(j[1]["device"], "mlx5_0");
  EXPECT_EQ(j[2]["detail"], "port 1");
}

TEST(CaseEvents, APortThatWentDownNamesItsHost) {
  reports::AttemptError failure{"h1", "traffic", "QP 0x11: retry_exceeded"};
  blame_port_down(failure, flap());
  EXPECT_EQ(failure.host, "h3");
  EXPECT_EQ(failure.message,
            "QP 0x11: retry_exceeded (host h3: mlx5_0 reported port_error at 200 ns: port 1)");
  // Events that take no port away leave the blame where it was.
  reports::AttemptError other{"h1", "traffic", "QP 0x11: retry_exceeded"};
  blame_port_down(other, {flap()[1]});
  EXPECT_EQ(other.host, "h1");
  EXPECT_EQ(other.message, "QP 0x11: retry_exceeded");
  EXPECT_EQ(first_port_down({}), nullptr);
}

}  // namespace
}  // namespace rocehil::run::case_traffic
