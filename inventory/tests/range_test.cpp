#include "rocehil/inventory/range.hpp"

#include <gtest/gtest.h>

namespace rocehil::inventory {
namespace {

using V = std::vector<std::string>;

TEST(Range, PlainValueIsItself) {
  const auto r = expand_range("gpu001");
  EXPECT_FALSE(r.had_range);
  EXPECT_EQ(r.values, V{"gpu001"});
  EXPECT_TRUE(r.error.empty());
}

TEST(Range, ZeroPaddingFollowsTheFirstBound) {
  EXPECT_EQ(expand_range("gpu[008-011]").values, (V{"gpu008", "gpu009", "gpu010", "gpu011"}));
  EXPECT_EQ(expand_range("h[9-11]").values, (V{"h9", "h10", "h11"}));
  EXPECT_EQ(expand_range("h[0-1]").values, (V{"h0", "h1"}));
}

TEST(Range, ListsAndSuffixes) {
  EXPECT_EQ(expand_range("h[1-2,5,10-11]").values, (V{"h1", "h2", "h5", "h10", "h11"}));
  EXPECT_EQ(expand_range("10.0.1.[11-13]").values, (V{"10.0.1.11", "10.0.1.12", "10.0.1.13"}));
  EXPECT_EQ(expand_range("[1-2].example.com").values, (V{"1.example.com", "2.example.com"}));
  EXPECT_EQ(expand_range("gpu[001-128]").values.size(), 128u);
}

TEST(Range, Errors) {
  for (const char* bad : {"gpu[010-001]", "gpu[001-010", "gpu001]", "gpu[]", "r[1-2]h[1-4]",
                          "gpu[a-3]", "gpu[1-]", "gpu[[1-2]]", "gpu[1,,2]", "gpu[-3]"}) {
    const auto r = expand_range(bad);
    EXPECT_FALSE(r.error.empty()) << bad;
    EXPECT_TRUE(r.values.empty()) << bad;
    EXPECT_NE(r.error.find(';'), std::string::npos) << "says how to fix: " << r.error;
  }
}

TEST(Range, ErrorsStayOnePrintableLine) {
  const auto r = expand_range(
      "gpu[0\x0e"
      "01-1\n28]");
  ASSERT_FALSE(r.error.empty());
  for (const char c : r.error) EXPECT_TRUE(c >= ' ' && c <= '~') << r.error;
  EXPECT_NE(r.error.find("\\x0e"), std::string::npos) << r.error;
}

TEST(Range, LimitIsAnErrorNotAnAllocation) {
  const auto r = expand_range("h[1-999999999]", 65536);
  EXPECT_FALSE(r.error.empty());
  EXPECT_TRUE(r.values.empty());
  EXPECT_EQ(expand_range("h[1-65536]", 65536).values.size(), 65536u);
}

}  // namespace
}  // namespace rocehil::inventory
