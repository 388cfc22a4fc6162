#include "shared/interrupt.hpp"

#include <csignal>

namespace rocehil::cli {

namespace {

// Not named `interrupted`: the commands name their reference to it so, and a unity batch puts
// them in one file with this one (-Wshadow).
std::atomic<bool> interrupt_flag{false};

extern "C" void rocehil_on_interrupt(int) {
  interrupt_flag.store(true);
}

void install() {
  interrupt_flag.store(false);
  std::signal(SIGINT, rocehil_on_interrupt);
  std::signal(SIGTERM, rocehil_on_interrupt);
}

}  // namespace

const std::atomic<bool>& catch_interrupts() {
  install();
  std::signal(SIGPIPE, SIG_IGN);
  return interrupt_flag;
}

InterruptScope::InterruptScope() {
  install();
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

const std::atomic<bool>& InterruptScope::flag() const {
  return interrupt_flag;
}

}  // namespace rocehil::cli
