#pragma once

// For death tests (run in a child process): leaves the child unable to start any thread, as a
// process limit would. Root is never held to RLIMIT_NPROC, so the child becomes an unprivileged
// user first, whose limit of one task is already spent by the child itself. Exits with 3 when
// that does not stop a thread from starting (the limit could not be set).

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>
#include <thread>

namespace rocehil::capture::testing {

inline void no_more_threads() {
  constexpr uid_t nobody = 65534;
  const rlimit one{1, 1};
  if (::setgid(nobody) != 0 || ::setuid(nobody) != 0 || ::setrlimit(RLIMIT_NPROC, &one) != 0)
    std::_Exit(3);
  try {
    std::thread([] {}).join();
  } catch (const std::system_error&) {
    return;  // as wanted
  }
  std::_Exit(3);
}

}  // namespace rocehil::capture::testing
