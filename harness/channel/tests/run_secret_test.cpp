#include "rocehil/channel/run_secret.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::channel {
namespace {

TEST(RunSecret, EachRunDrawsItsOwn) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) seen.insert(RunSecret::generate().for_launcher());
  EXPECT_EQ(seen.size(), 64u);
}

TEST(RunSecret, TheLaunchersTextReadsBackAsTheSameSecret) {
  const RunSecret s = RunSecret::generate();
  const std::string text = s.for_launcher();
  EXPECT_EQ(text.size(), 64u);
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), std::string::npos);
  const auto back = RunSecret::parse(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(*back == s);
  EXPECT_FALSE(*back == RunSecret::generate());
}

TEST(RunSecret, AnythingElseIsNoSecret) {
  const std::string good = RunSecret::generate().for_launcher();
  EXPECT_FALSE(RunSecret::parse(""));
  EXPECT_FALSE(RunSecret::parse(good.substr(1)));
  EXPECT_FALSE(RunSecret::parse(good + "0"));
  EXPECT_FALSE(RunSecret::parse(std::string(63, 'a') + "g"));
  EXPECT_FALSE(RunSecret::parse(" " + good.substr(1)));
}

TEST(RunSecret, TakenFromTheEnvironmentItLeavesIt) {
  const RunSecret s = RunSecret::generate();
  ASSERT_EQ(::setenv("ROCEHIL_RUN_SECRET", s.for_launcher().c_str(), 1), 0);
  const auto taken = take_secret_from_environment();
  ASSERT_TRUE(taken.has_value());
  EXPECT_TRUE(*taken == s);
  EXPECT_EQ(std::getenv("ROCEHIL_RUN_SECRET"), nullptr);
  EXPECT_FALSE(take_secret_from_environment().has_value());
}

TEST(RunSecret, ADamagedOneInTheEnvironmentIsRefusedWithoutEchoingIt) {
  ASSERT_EQ(::setenv("ROCEHIL_RUN_SECRET", "not-a-secret-but-private", 1), 0);
  try {
    take_secret_from_environment();
    FAIL() << "a damaged secret was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()).find("not-a-secret"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ROCEHIL_RUN_SECRET"), std::string::npos);
  }
  EXPECT_EQ(std::getenv("ROCEHIL_RUN_SECRET"), nullptr);
}

}  // namespace
}  // namespace rocehil::channel
