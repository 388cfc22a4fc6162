// Soft QPs against the agent's descriptor limit: one socket each, refused with the numbers.
#include "soft_qp_budget.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace rocehil::agent {
namespace {

TEST(SoftQpBudget, QpsThatFitUnderTheLimitPass) {
  EXPECT_FALSE(soft_qps_refused(16384, {.soft = 20000, .hard = 20000}).has_value());
  EXPECT_FALSE(soft_qps_refused(960, {.soft = 1024, .hard = 1024}).has_value());
}

TEST(SoftQpBudget, MoreThanTheLimitIsRefusedWithTheNumbers) {
  EXPECT_EQ(soft_qps_refused(4096, {.soft = 1024, .hard = 4096}),
            "setup: 4096 soft QPs need 4160 file descriptors (one UDP socket each, and 64 for the "
            "agent), and this agent may open 1024 (RLIMIT_NOFILE; hard limit 4096): raise the "
            "agent's limit (ulimit -n, or LimitNOFILE= in its unit) or lower qps");
  EXPECT_TRUE(soft_qps_refused(961, {.soft = 1024, .hard = 1024}).has_value());
}

// The process's own soft limit is raised toward its hard one when the QPs need it, and the
// kernel's reading of it says so.
TEST(SoftQpBudget, TheSoftLimitIsRaisedTowardTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max != RLIM_INFINITY && before.rlim_max < 2048)
    GTEST_SKIP() << "hard limit " << before.rlim_max << " below what the test needs";
  rlimit lowered = before;
  lowered.rlim_cur = 512;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  EXPECT_FALSE(make_room_for_soft_qps(1500).has_value());
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_GE(after.rlim_cur, 1500u + agent_reserved_fds);
  setrlimit(RLIMIT_NOFILE, &before);
}

}  // namespace
}  // namespace rocehil::agent
