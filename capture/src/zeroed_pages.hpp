#pragma once

#include <cstddef>

namespace rocehil::capture {

// A zero-filled block of anonymous memory for hash tables: the kernel hands out zeroed pages (no
// memset in user space), all of them at once, since a table soon touches every page it has; and
// blocks of 2 MiB or more ask for transparent huge pages, so a table bigger than the TLB's reach
// does not pay a page walk on top of each cache miss. Move-only; throws std::bad_alloc when the
// memory is not there.
class ZeroedPages {
 public:
  ZeroedPages() = default;
  explicit ZeroedPages(std::size_t bytes);
  ZeroedPages(ZeroedPages&& other) noexcept;
  ZeroedPages& operator=(ZeroedPages&& other) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ~ZeroedPages();

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Asks for transparent huge pages under the 2 MiB-aligned part of [data, data + bytes), which
// must be memory the caller owns and has not touched yet (a vector just reserved). A block of
// tens of MiB written once then takes a fault per 2 MiB instead of one per 4 KiB page: at 178k
// flows the report's vectors took ~8k faults. Advice only; smaller blocks are left alone.
void advise_huge_pages(void* data, std::size_t bytes) noexcept;

}  // namespace rocehil::capture
