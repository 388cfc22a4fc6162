#include "rocehil/channel/event_loop.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>

#include "rocehil/common/error.hpp"

namespace rocehil::channel {

EventLoop::EventLoop() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) throw system_error("creating the controller's event loop (epoll)", errno);
}

EventLoop::~EventLoop() {
  ::close(epoll_fd_);
}

void EventLoop::watch(int fd, std::uint32_t events, Handler handler) {
  const std::uint64_t serial = next_serial_++;
  epoll_event e{};
  e.events = events;
  e.data.u64 = serial;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &e) != 0)
    throw system_error(fmt::format("watching descriptor {} (epoll_ctl)", fd), errno);
  entries_[serial] = std::make_shared<Entry>(Entry{fd, std::move(handler)});
  by_fd_[fd] = serial;
}

void EventLoop::change(int fd, std::uint32_t events) {
  const auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  epoll_event e{};
  e.events = events;
  e.data.u64 = it->second;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &e) != 0)
    throw system_error(fmt::format("changing what descriptor {} waits for (epoll_ctl)", fd), errno);
}

void EventLoop::forget(int fd) {
  const auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  entries_.erase(it->second);
  by_fd_.erase(it);
}

int EventLoop::run_once(std::chrono::milliseconds timeout) {
  const int n = ::epoll_wait(epoll_fd_, ready_.data(), static_cast<int>(ready_.size()),
                             static_cast<int>(timeout.count()));
  if (n < 0) {
    if (errno == EINTR) return 0;
    throw system_error("waiting for the agents' connections (epoll_wait)", errno);
  }
  int ran = 0;
  for (int i = 0; i < n; ++i) {
    // Copied out: epoll_event is packed on x86-64, and a reference to its members is misaligned.
    const std::uint64_t serial = ready_[static_cast<std::size_t>(i)].data.u64;
    const std::uint32_t events = ready_[static_cast<std::size_t>(i)].events;
    const auto it = entries_.find(serial);
    if (it == entries_.end()) continue;  // forgotten by an earlier handler of this batch
    // Held while it runs: the handler may forget its own descriptor.
    const std::shared_ptr<Entry> entry = it->second;
    entry->handler(events);
    ++ran;
  }
  return ran;
}

}  // namespace rocehil::channel
