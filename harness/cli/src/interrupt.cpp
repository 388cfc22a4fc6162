#include "interrupt.hpp"

#include <csignal>

namespace rocehil::cli {

namespace {

std::atomic<bool> interrupted{false};

extern "C" void rocehil_on_interrupt(int) {
  interrupted.store(true);
}

}  // namespace

const std::atomic<bool>& catch_interrupts() {
  interrupted.store(false);
  std::signal(SIGINT, rocehil_on_interrupt);
  std::signal(SIGTERM, rocehil_on_interrupt);
  std::signal(SIGPIPE, SIG_IGN);
  return interrupted;
}

}  // namespace rocehil::cli
