// ibv_async_event as rocehil reports it: the kind by type, the detail from the element verbs.h
// says the type fills (port number, QP number, CQ handle). No device needed: the events are built
// here as libibverbs hands them out.
#include "verbs/async_events.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic::verbs {
namespace {

ibv_async_event of_type(ibv_event_type type) {
  ibv_async_event e{};
  e.event_type = type;
  return e;
}

TEST(VerbsAsyncEvents, PortEventsNameThePort) {
  ibv_async_event down = of_type(IBV_EVENT_PORT_ERR);
  down.element.port_num = 2;
  const DeviceEvent d = describe_async_event(down, "mlx5_1", 1234);
  EXPECT_EQ(d.kind, "port_error");
  EXPECT_EQ(d.detail, "port 2");
  EXPECT_EQ(d.device, "mlx5_1");
  EXPECT_EQ(d.at_ns, 1234);
  ibv_async_event up = of_type(IBV_EVENT_PORT_ACTIVE);
  up.element.port_num = 1;
  EXPECT_EQ(describe_async_event(up, "mlx5_0", 1).kind, "port_active");
  ibv_async_event gid = of_type(IBV_EVENT_GID_CHANGE);
  gid.element.port_num = 1;
  EXPECT_EQ(describe_async_event(gid, "mlx5_0", 1).kind, "gid_change");
  EXPECT_EQ(describe_async_event(gid, "mlx5_0", 1).detail, "port 1");
}

TEST(VerbsAsyncEvents, QpAndCqEventsNameTheirQueue) {
  ibv_qp qp{};
  qp.qp_num = 0x1a2b;
  for (const auto& [type, kind] : {std::pair{IBV_EVENT_QP_FATAL, "qp_fatal"},
                                   std::pair{IBV_EVENT_QP_REQ_ERR, "qp_request_error"},
                                   std::pair{IBV_EVENT_QP_ACCESS_ERR, "qp_access_error"}}) {
    ibv_async_event e = of_type(type);
    e.element.qp = &qp;
    const DeviceEvent d = describe_async_event(e, "mlx5_0", 1);
    EXPECT_EQ(d.kind, kind);
    EXPECT_EQ(d.detail, "QP 0x1a2b");
  }
  ibv_cq cq{};
  cq.handle = 0x42;
  ibv_async_event e = of_type(IBV_EVENT_CQ_ERR);
  e.element.cq = &cq;
  EXPECT_EQ(describe_async_event(e, "mlx5_0", 1).kind, "cq_error");
  EXPECT_EQ(describe_async_event(e, "mlx5_0", 1).detail, "CQ 0x42");
}

TEST(VerbsAsyncEvents, OthersKeepLibibverbsNames) {
  EXPECT_EQ(describe_async_event(of_type(IBV_EVENT_DEVICE_FATAL), "mlx5_0", 1).kind,
            "device_fatal");
  ibv_qp qp{};
  qp.qp_num = 7;
  ibv_async_event e = of_type(IBV_EVENT_COMM_EST);
  e.element.qp = &qp;
  const DeviceEvent d = describe_async_event(e, "mlx5_0", 1);
  EXPECT_EQ(d.kind, ibv_event_type_str(IBV_EVENT_COMM_EST));
  EXPECT_EQ(d.detail, "QP 0x7");
}

}  // namespace
}  // namespace rocehil::traffic::verbs
