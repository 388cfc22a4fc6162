#include "analysis/radix_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

namespace rocehil::capture {
namespace {

struct Record {
  std::uint64_t high;
  std::uint64_t low;
  std::uint32_t input_index;  // where the record stood before sorting: checks stability
};

std::array<std::uint64_t, 2> key_of(const Record& r) {
  return {r.high, r.low};
}

// The order radix_sort must give: the key's, equal keys in input order. (std::sort with the
// input index as the last key, not std::stable_sort, whose temporary buffer clang's
// AddressSanitizer reports as an alloc-dealloc mismatch with libstdc++ 12.)
std::vector<Record> reference(std::vector<Record> records) {
  std::sort(records.begin(), records.end(), [](const Record& x, const Record& y) {
    return std::tie(x.high, x.low, x.input_index) < std::tie(y.high, y.low, y.input_index);
  });
  return records;
}

void expect_same_order(const std::vector<Record>& got, const std::vector<Record>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].high, want[i].high) << "record " << i;
    ASSERT_EQ(got[i].low, want[i].low) << "record " << i;
    ASSERT_EQ(got[i].input_index, want[i].input_index) << "record " << i;
  }
}

std::vector<Record> numbered(std::vector<Record> records) {
  for (std::size_t i = 0; i < records.size(); ++i)
    records[i].input_index = static_cast<std::uint32_t>(i);
  return records;
}

TEST(RadixSort, EmptyAndSingleRecordsAreLeftAsTheyAre) {
  std::vector<Record> none;
  radix_sort(none, key_of);
  EXPECT_TRUE(none.empty());
  std::vector<Record> one{{5, 6, 0}};
  radix_sort(one, key_of);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].high, 5u);
}

TEST(RadixSort, EqualKeysKeepTheirInputOrder) {
  // Every byte is the same in every key: no pass runs, and the order must be the input's.
  std::vector<Record> same = numbered(std::vector<Record>(50, Record{0x1234, 0x5678, 0}));
  radix_sort(same, key_of);
  expect_same_order(same, reference(same));
}

TEST(RadixSort, TheMoreSignificantWordDecides) {
  // The low word is larger where the high word is smaller, in the top and the bottom byte.
  std::vector<Record> r = numbered({{2, 0, 0},
                                    {1, ~std::uint64_t{0}, 0},
                                    {std::uint64_t{1} << 63, 0, 0},
                                    {1, 0xff, 0},
                                    {0, std::uint64_t{0xff} << 56, 0}});
  const std::vector<Record> want = reference(r);
  radix_sort(r, key_of);
  expect_same_order(r, want);
}

TEST(RadixSort, MatchesAStableSortOnRandomKeys) {
  std::mt19937_64 rng(11);
  // Full-width keys, keys with few distinct values (many ties: stability counts), and keys that
  // vary in a few scattered bytes only (the passes skipped in between must not matter).
  const std::vector<std::uint64_t> masks = {~std::uint64_t{0}, 0x3, 0x00ff0000ff00ff00ull};
  for (const std::uint64_t mask : masks) {
    for (const std::size_t n : {2u, 3u, 255u, 256u, 257u, 10000u, 40000u}) {
      SCOPED_TRACE(::testing::Message() << "mask " << std::hex << mask << std::dec << ", " << n);
      std::vector<Record> r(n);
      for (Record& x : r) x = {rng() & mask, rng() & mask, 0};
      r = numbered(std::move(r));
      const std::vector<Record> want = reference(r);
      radix_sort(r, key_of);
      expect_same_order(r, want);
    }
  }
}

TEST(RadixSort, RecordsSplitByTheirTopBytesFirstEndInTheSameOrder) {
  // A small in-cache size makes every bucket larger than it split again, down to the last byte,
  // and buckets of one record, of none and of equal keys all occur.
  std::mt19937_64 rng(12);
  const std::vector<std::uint64_t> masks = {~std::uint64_t{0}, 0x0301, 0xff000000000000ffull};
  for (const std::uint64_t mask : masks) {
    for (const std::size_t in_cache : {1u, 2u, 16u, 300u}) {
      SCOPED_TRACE(::testing::Message()
                   << "mask " << std::hex << mask << std::dec << ", in cache " << in_cache);
      std::vector<Record> r(3000);
      for (Record& x : r) x = {rng() & mask, rng() & mask, 0};
      r = numbered(std::move(r));
      const std::vector<Record> want = reference(r);
      radix_sort(r, key_of, in_cache);
      expect_same_order(r, want);
    }
  }
}

}  // namespace
}  // namespace rocehil::capture
