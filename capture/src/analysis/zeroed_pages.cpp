#include "analysis/zeroed_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <utility>

namespace rocehil::capture {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older headers lack the name
#endif
}  // namespace

ZeroedPages::ZeroedPages(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // A hash table touches all of its pages soon, and reads a slot before writing it: left lazy,
  // each page is first mapped to the shared zero page, then faulted again on the first write,
  // and that second fault flushes the old mapping from every CPU the process runs on (an IPI
  // per page while parallel workers run; ~1,000 per run with 2 workers at 178k flows).
  prepare_pages(p, bytes);
  data_ = p;
}

void prepare_pages(void* data, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto inner = [&](std::uintptr_t unit) {
    return std::pair{(begin + unit - 1) & ~(unit - 1), (begin + bytes) & ~(unit - 1)};
  };
  // Advice only: where THP is off, the memory works the same on small pages.
  if (const auto [first, last] = inner(huge_page); last > first)
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  // A kernel before 5.14 refuses this advice: those pages stay lazy.
  if (const auto [first, last] = inner(page); last > first)
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
}

ZeroedPages::ZeroedPages(ZeroedPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

ZeroedPages::~ZeroedPages() {
  if (data_) ::munmap(data_, bytes_);
}

}  // namespace rocehil::capture
