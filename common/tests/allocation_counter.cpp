#include "allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::size_t> counted{0};
}

void* operator new(std::size_t n) {
  counted.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace rocehil::testing {

std::size_t allocations() {
  return counted.load(std::memory_order_relaxed);
}

}  // namespace rocehil::testing
