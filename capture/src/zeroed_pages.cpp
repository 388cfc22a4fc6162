#include "zeroed_pages.hpp"

#include <sys/mman.h>

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
  // Advice only: where THP is off, the table works the same on small pages.
  if (bytes >= huge_page) ::madvise(p, bytes, MADV_HUGEPAGE);
  // A hash table touches all of its pages soon, and reads a slot before writing it: left lazy,
  // each page is first mapped to the shared zero page, then faulted again on the first write,
  // and that second fault flushes the old mapping from every CPU the process runs on (an IPI
  // per page while parallel workers run; ~1,000 per run with 2 workers at 178k flows). Writing
  // them in here is one system call. A kernel before 5.14 refuses the advice: lazy it stays.
  ::madvise(p, bytes, MADV_POPULATE_WRITE);
  data_ = p;
}

void advise_huge_pages(void* data, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + huge_page - 1) & ~(huge_page - 1);
  const std::uintptr_t last = (begin + bytes) & ~(huge_page - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
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
