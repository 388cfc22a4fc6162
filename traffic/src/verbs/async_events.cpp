#include "verbs/async_events.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {

namespace {

// The kinds rocehil names; every other event keeps libibverbs' own name (ibv_event_type_str).
std::string kind_of(ibv_event_type type) {
  switch (type) {
    case IBV_EVENT_PORT_ACTIVE: return "port_active";
    case IBV_EVENT_PORT_ERR: return "port_error";
    case IBV_EVENT_QP_FATAL: return "qp_fatal";
    case IBV_EVENT_QP_REQ_ERR: return "qp_request_error";
    case IBV_EVENT_QP_ACCESS_ERR: return "qp_access_error";
    case IBV_EVENT_CQ_ERR: return "cq_error";
    case IBV_EVENT_SRQ_ERR: return "srq_error";
    case IBV_EVENT_GID_CHANGE: return "gid_change";
    case IBV_EVENT_DEVICE_FATAL: return "device_fatal";
    default: return ibv_event_type_str(type);
  }
}

}  // namespace

DeviceEvent describe_async_event(const ibv_async_event& event, std::string_view device,
                                 std::int64_t at_ns) {
  DeviceEvent out{.at_ns = at_ns,
                  .device = std::string(device),
                  .kind = kind_of(event.event_type),
                  .detail = {}};
  // verbs.h says which member of `element` each event type fills.
  switch (event.event_type) {
    case IBV_EVENT_CQ_ERR:
      out.detail = event.element.cq ? fmt::format("CQ {:#x}", event.element.cq->handle) : "CQ";
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      out.detail = event.element.qp ? fmt::format("QP {:#x}", event.element.qp->qp_num) : "QP";
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: out.detail = "SRQ"; break;
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE: out.detail = fmt::format("port {}", event.element.port_num); break;
    case IBV_EVENT_DEVICE_FATAL: out.detail = "the device needs a reset"; break;
    default: out.detail = fmt::format("event type {}", static_cast<int>(event.event_type));
  }
  return out;
}

AsyncEventReader::AsyncEventReader(ibv_context* context, std::string device, DeviceEventLog& log)
    : context_(context), device_(std::move(device)), log_(log) {
  // Non-blocking, so the thread sleeps in poll() beside the stop eventfd rather than inside
  // ibv_get_async_event, where nothing could wake it to end.
  const int flags = ::fcntl(context_->async_fd, F_GETFL);
  if (flags < 0 || ::fcntl(context_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw system_error(fmt::format("{}: making the async event fd non-blocking", device_), errno);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) throw system_error("eventfd for the async event reader", errno);
  thread_ = std::thread([this] { run(); });
}

AsyncEventReader::~AsyncEventReader() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(stop_fd_, &one, sizeof one);
  thread_.join();
  ::close(stop_fd_);
}

void AsyncEventReader::run() {
  pollfd fds[2] = {{context_->async_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    ibv_async_event event{};
    while (ibv_get_async_event(context_, &event) == 0) {
      log_.add(describe_async_event(event, device_, wall_clock_ns()));
      ibv_ack_async_event(&event);
    }
  }
}

}  // namespace rocehil::traffic::verbs
