#pragma once

// Work handed to another thread where a thread can be had. Under a process limit (RLIMIT_NPROC,
// a cgroup's pids.max) std::async throws std::system_error instead; then the work is deferred,
// and done by whoever waits for it, so a result never depends on getting a thread.

#include <future>
#include <system_error>
#include <utility>

namespace rocehil::capture {

template <class Job>
auto async_or_deferred(Job job) {
  try {
    return std::async(std::launch::async, job);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, std::move(job));
  }
}

}  // namespace rocehil::capture
