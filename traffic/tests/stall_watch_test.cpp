// A QP's longest wait for a completion, worked out by hand from the posts and completions.
#include "rocehil/traffic/stall_watch.hpp"

#include <gtest/gtest.h>

namespace rocehil::traffic {
namespace {

constexpr std::uint64_t ms = 1'000'000;

TEST(StallWatch, TheLongestGapBetweenCompletionsWhileWorkWasOutstanding) {
  StallWatch w;
  w.posted(0, true);
  EXPECT_FALSE(w.longest());  // nothing completed yet: the first round trip is no stall
  w.completed(300 * ms);      // 300 ms to the first completion (setup, ARP): not counted
  w.completed(310 * ms);
  w.completed(320 * ms);
  w.completed(2'320 * ms);  // 2 s with nothing: a dead path
  w.completed(2'330 * ms);
  ASSERT_TRUE(w.longest());
  EXPECT_EQ(w.longest()->ns, 2'000 * ms);
  EXPECT_EQ(w.longest()->from_ns, 320 * ms);
}

TEST(StallWatch, TimeWithNothingOutstandingIsNoStall) {
  StallWatch w;
  w.posted(0, true);
  w.completed(10 * ms);  // the QP has nothing outstanding now (paced: waiting for tokens)
  w.posted(900 * ms, true);
  w.completed(920 * ms);
  EXPECT_EQ(w.longest()->ns, 20 * ms);
  EXPECT_EQ(w.longest()->from_ns, 900 * ms);
  // A post to a QP that already waits does not restart its wait.
  w.posted(930 * ms, false);
  w.completed(1'020 * ms);
  EXPECT_EQ(w.longest()->ns, 100 * ms);
  EXPECT_EQ(w.longest()->from_ns, 920 * ms);
}

TEST(StallWatch, WorkStillOutstandingAtTheEndHasWaitedUntilThen) {
  StallWatch w;
  w.posted(0, true);
  w.completed(5 * ms);
  w.completed(15 * ms);
  w.ended(6'015 * ms, true);  // its requests never completed: 6 s and counting
  EXPECT_EQ(w.longest()->ns, 6'000 * ms);
  EXPECT_EQ(w.longest()->from_ns, 15 * ms);
  StallWatch done;
  done.posted(0, true);
  done.completed(5 * ms);
  done.completed(6 * ms);
  done.ended(9'000 * ms, false);          // all of it completed: the time after is no stall
  EXPECT_EQ(done.longest()->ns, 1 * ms);  // between its two completions
}

}  // namespace
}  // namespace rocehil::traffic
