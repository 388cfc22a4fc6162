#pragma once

#include <atomic>

namespace rocehil::cli {

// The flag a long command (run, bisect, selftest) passes down so SIGINT and SIGTERM end the case
// that is running instead of the process: what was measured is written, the rest marked not run.
// Installs the handlers (and ignores SIGPIPE, so a closed agent pipe is an error, not a death),
// clears the flag, and returns it. One flag per process: commands run one at a time.
const std::atomic<bool>& catch_interrupts();

}  // namespace rocehil::cli
