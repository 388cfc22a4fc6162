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
// The nothrow form too (std::stable_sort's buffer takes it): counted, and from the same heap as
// the deletes below free, or a sanitizer sees new matched with free.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  counted.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace rocehil::testing {

std::size_t allocations() {
  return counted.load(std::memory_order_relaxed);
}

}  // namespace rocehil::testing
