#include "analysis/zeroed_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace rocehil::capture {
namespace {

// Pages of [data, data + bytes) that are in memory now, by mincore(2).
std::size_t resident_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (::mincore(const_cast<void*>(data), bytes, in_core.data()) != 0) return 0;
  std::size_t n = 0;
  for (const unsigned char c : in_core) n += c & 1;
  return n;
}

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;
#endif

// Whether this kernel populates on advice (Linux 5.14+), asked on a mapping of the test's own.
bool kernel_populates() {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* p = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = ::madvise(p, page, MADV_POPULATE_WRITE) == 0;
  ::munmap(p, page);
  return ok;
}

TEST(ZeroedPages, AreZeroAndAlreadyInMemory) {
  if (!kernel_populates())
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14+): pages stay lazy";
  // Populated up front: a table reading an untouched slot must not map the shared zero page
  // first and fault again on the write (zeroed_pages.cpp says what that costs).
  for (const std::size_t bytes : {std::size_t{64} << 10, std::size_t{4} << 20}) {
    SCOPED_TRACE(bytes);
    const ZeroedPages z(bytes);
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_EQ(resident_pages(z.data(), bytes), bytes / page);
    const auto* b = static_cast<const std::uint8_t*>(z.data());
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; ++i) nonzero += b[i] != 0;
    EXPECT_EQ(nonzero, 0u);
  }
}

TEST(PreparePages, MakesTheWholePagesInsideTheBlockResidentAndLeavesTheEdges) {
  if (!kernel_populates())
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14+): pages stay lazy";
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes = std::size_t{4} << 20;
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* b = static_cast<std::uint8_t*>(m);
  b[page + 7] = 42;  // a page that already holds data keeps it
  // A block that starts and ends inside a page, as a vector's storage does.
  prepare_pages(b + 100, bytes - 200);
  EXPECT_EQ(resident_pages(b, page), 0u);  // partly outside the block: not the caller's to touch
  EXPECT_EQ(resident_pages(b + page, bytes - 2 * page), bytes / page - 2);
  EXPECT_EQ(resident_pages(b + bytes - page, page), 0u);
  EXPECT_EQ(b[page + 7], 42);
  EXPECT_EQ(b[2 * page], 0);
  ::munmap(m, bytes);
}

TEST(ZeroedPages, MoveLeavesTheSourceEmpty) {
  ZeroedPages a(4096);
  void* p = a.data();
  ZeroedPages b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 4096u);
  EXPECT_EQ(a.data(),
            nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(a.size(), 0u);
}

}  // namespace
}  // namespace rocehil::capture
