#pragma once

#include <sys/epoll.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace rocehil::channel {

// The controller's one event loop (epoll): every agent connection, and the listener they dial,
// is a descriptor with a handler; no thread or process per agent. Level-triggered, so a handler
// that leaves data unread is called again.
class EventLoop {
 public:
  using Handler = std::function<void(std::uint32_t events)>;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Calls `handler` with epoll's event bits whenever `fd` is ready for `events` (EPOLLIN,
  // EPOLLOUT). Throws rocehil::Error when the kernel refuses the descriptor.
  void watch(int fd, std::uint32_t events, Handler handler);
  void change(int fd, std::uint32_t events);
  // Stops watching (before the caller closes `fd`); safe from inside any handler, its own too:
  // an event already collected for it is not delivered.
  void forget(int fd);

  // Waits up to `timeout` for ready descriptors and runs their handlers; returns how many ran.
  int run_once(std::chrono::milliseconds timeout);

  std::size_t watched() const { return by_fd_.size(); }

 private:
  struct Entry {
    int fd;
    Handler handler;
  };
  int epoll_fd_ = -1;
  std::uint64_t next_serial_ = 1;
  // By serial (what epoll hands back), so an event collected for a descriptor that was
  // forgotten, closed and reused in the same batch finds no handler instead of the new one's.
  std::unordered_map<std::uint64_t, std::shared_ptr<Entry>> entries_;
  std::unordered_map<int, std::uint64_t> by_fd_;
  std::array<epoll_event, 256> ready_{};
};

}  // namespace rocehil::channel
