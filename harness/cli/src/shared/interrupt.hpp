#pragma once

#include <atomic>

namespace rocehil::cli {

// The one SIGINT/SIGTERM handler of the command line: it sets a flag that long work polls, so
// Ctrl-C ends the running case, capture or injection instead of the process, and what was
// measured is still written. One flag per process: commands run one at a time.

// For run, bisect, selftest, traffic and collective: installs the handlers for the rest of the
// process (and ignores SIGPIPE, so a closed agent pipe is an error, not a death), clears the
// flag, and returns it.
const std::atomic<bool>& catch_interrupts();

// For capture and inject: the same handlers while it lives; the default ones again after it,
// so a second Ctrl-C during the summary ends the process.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
  const std::atomic<bool>& flag() const;
};

}  // namespace rocehil::cli
