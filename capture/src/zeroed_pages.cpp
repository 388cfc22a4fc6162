#include "zeroed_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace rocehil::capture {

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;
}

ZeroedPages::ZeroedPages(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Advice only: where THP is off, the table works the same on small pages.
  if (bytes >= huge_page) ::madvise(p, bytes, MADV_HUGEPAGE);
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
