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

// Makes the whole pages of [data, data + bytes) resident and writable in one system call, on
// transparent huge pages where 2 MiB-aligned blocks fit. For a large block the caller owns and
// is about to fill (a vector just reserved): the report's vectors at 178k flows otherwise took
// a fault per 4 KiB page, ~8k of them. Advice only: contents are untouched, and a kernel that
// cannot do it leaves the pages to fault in as usual.
void prepare_pages(void* data, std::size_t bytes) noexcept;

}  // namespace rocehil::capture
