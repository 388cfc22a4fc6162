// The bounded event log a provider keeps between two take_events().
#include "device_events.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic {
namespace {

TEST(DeviceEventLog, TakeEmptiesItInOrder) {
  DeviceEventLog log;
  log.add({.at_ns = 1, .device = "eth1", .kind = "port_error", .detail = "carrier lost"});
  log.add({.at_ns = 2, .device = "eth1", .kind = "port_active", .detail = "carrier back"});
  const auto events = log.take();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "port_error");
  EXPECT_EQ(events[1].at_ns, 2);
  EXPECT_TRUE(log.take().empty());
}

TEST(DeviceEventLog, AFlappingPortIsCountedNotKept) {
  DeviceEventLog log;
  for (int i = 0; i < static_cast<int>(max_device_events) + 6; ++i)
    log.add({.at_ns = i, .device = "eth1", .kind = "port_error", .detail = "carrier lost"});
  const auto events = log.take();
  ASSERT_EQ(events.size(), max_device_events);
  EXPECT_EQ(events.back().detail, "carrier lost (and 6 more events not kept)");
  log.add({.at_ns = 99, .device = "eth1", .kind = "port_active", .detail = "carrier back"});
  EXPECT_EQ(log.take().back().detail, "carrier back");  // the count starts again
}

}  // namespace
}  // namespace rocehil::traffic
