#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <string_view>
#include <thread>

#include "device_events.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::traffic::verbs {

// An ibv_async_event as rocehil reports it: the kind by the event type, the detail by the element
// it names (the port number, the QP or CQ handle's number). Pure: the reader and its tests.
DeviceEvent describe_async_event(const ibv_async_event& event, std::string_view device,
                                 std::int64_t at_ns);

// Reads a device's asynchronous events on a thread of its own from construction to destruction,
// acknowledging each at once (ibv_destroy_qp and ibv_destroy_cq wait for the events naming them
// to be acknowledged), and keeps them in `log`.
class AsyncEventReader {
 public:
  AsyncEventReader(ibv_context* context, std::string device, DeviceEventLog& log);
  ~AsyncEventReader();
  AsyncEventReader(const AsyncEventReader&) = delete;
  AsyncEventReader& operator=(const AsyncEventReader&) = delete;

 private:
  void run();

  ibv_context* context_;
  std::string device_;
  DeviceEventLog& log_;
  int stop_fd_ = -1;  // an eventfd: written once to end the thread
  std::thread thread_;
};

}  // namespace rocehil::traffic::verbs
