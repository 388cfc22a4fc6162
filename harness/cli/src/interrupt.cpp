#include "interrupt.hpp"

#include <csignal>

namespace rocehil::cli {

namespace {

std::atomic<bool> interrupted{false};

extern "C" void rocehil_on_interrupt(int) {
  interrupted.store(true);
}

void install() {
  interrupted.store(false);
  std::signal(SIGINT, rocehil_on_interrupt);
  std::signal(SIGTERM, rocehil_on_interrupt);
}

}  // namespace

const std::atomic<bool>& catch_interrupts() {
  install();
  std::signal(SIGPIPE, SIG_IGN);
  return interrupted;
}

InterruptScope::InterruptScope() {
  install();
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

const std::atomic<bool>& InterruptScope::flag() const {
  return interrupted;
}

}  // namespace rocehil::cli
