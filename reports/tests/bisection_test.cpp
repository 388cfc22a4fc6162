#include "rocehil/reports/bisection.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = "c";  // appended, not "c" + ...: gcc 12's -Wrestrict misfires on that
    name += std::to_string(i);
    out.push_back(name);
  }
  return out;
}

// Runs the search against a fabric whose first bad candidate is `first_bad`, as rocehil bisect
// does; returns the answer and counts the runs.
std::size_t search(std::size_t n, std::size_t first_bad, std::size_t& runs) {
  Bisection b{.candidates = n, .is_bad = {}};
  const auto list = names(n);
  runs = 0;
  while (const auto next = b.next(list)) {
    ++runs;
    b.is_bad[*next] = *next >= first_bad;
  }
  return b.range(list).first_bad;
}

TEST(Bisection, FindsEveryFirstBadInAtMostLog2Runs) {
  for (std::size_t n = 2; n <= 40; ++n)
    for (std::size_t first_bad = 1; first_bad < n; ++first_bad) {
      std::size_t runs = 0;
      EXPECT_EQ(search(n, first_bad, runs), first_bad) << n;
      EXPECT_LE(runs, Bisection::runs_needed(n)) << n << " " << first_bad;
    }
  EXPECT_EQ(Bisection::runs_needed(2), 0u);
  EXPECT_EQ(Bisection::runs_needed(9), 3u);   // 8 gaps: 3 halvings
  EXPECT_EQ(Bisection::runs_needed(10), 4u);  // 9 gaps: ceil(log2 9)
  for (std::size_t n = 3; n < 200; ++n)
    EXPECT_EQ(Bisection::runs_needed(n),
              static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(n - 1)))));
}

TEST(Bisection, RecordedVerdictsResumeTheSearch) {
  const auto list = names(9);
  Bisection b{.candidates = 9, .is_bad = {}};
  EXPECT_EQ(b.next(list), 4u);
  b.is_bad[4] = false;  // what the killed run had recorded
  EXPECT_EQ(b.next(list), 6u);
  b.is_bad[6] = true;
  EXPECT_EQ(b.next(list), 5u);
  b.is_bad[5] = true;
  EXPECT_FALSE(b.next(list));
  EXPECT_EQ(b.range(list).first_bad, 5u);
  EXPECT_EQ(b.range(list).last_good, 4u);
}

TEST(Bisection, AGoodAfterABadIsNamedNotSearchedAround) {
  const auto list = names(9);
  Bisection b{.candidates = 9, .is_bad = {{3, true}, {6, false}}};
  try {
    b.next(list);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'c6' was good but 'c3' before it was bad"),
              std::string::npos)
        << e.what();
  }
}

TEST(Bisection, CandidatesFileSkipsCommentsAndRefusesDuplicates) {
  EXPECT_EQ(parse_candidates("# rates, good to bad\n400\n  360 # ok\n\n320\r\n", "r.txt"),
            (std::vector<std::string>{"400", "360", "320"}));
  try {
    parse_candidates("400\n360\n400\n", "r.txt");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.txt:3: candidate '400' is listed twice"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_candidates("# only one\n400\n", "r.txt"), Error);
}

}  // namespace
}  // namespace rocehil::reports
