#include "rocehil/channel/run_secret.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
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

namespace rocehil::channel {
namespace {

// Secret files in a temporary directory of the test's own, removed after it.
class SecretFile : public testing::Test {
 protected:
  SecretFile() { EXPECT_NE(::mkdtemp(dir_), nullptr); }
  ~SecretFile() override { std::filesystem::remove_all(dir_); }

  // A new file with `text` and `mode`.
  std::string secret_file(const std::string& text, mode_t mode) {
    const std::string path = std::string(dir_) + "/fleet" + std::to_string(files_++) + ".key";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    EXPECT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::fchmod(fd, mode);
    ::close(fd);
    return path;
  }

 private:
  char dir_[32] = "/tmp/rocehil-secret-XXXXXX";
  int files_ = 0;
};

std::string refusal(const std::string& path) {
  try {
    (void)read_secret_file(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    return e.what();
  }
  return "read";
}

TEST_F(SecretFile, ItsFirstLineIsTheSecret) {
  const RunSecret s = RunSecret::generate();
  EXPECT_TRUE(read_secret_file(secret_file(s.for_launcher() + "\n", 0600)) == s);
  EXPECT_TRUE(read_secret_file(secret_file(s.for_launcher(), 0400)) == s);
  EXPECT_TRUE(read_secret_file(secret_file(s.for_launcher() + "\r\nnotes\n", 0600)) == s);
}

TEST_F(SecretFile, OneOthersMayReadOrThatIsNoSecretIsRefusedNamingTheFix) {
  const RunSecret s = RunSecret::generate();
  const std::string open_to_all = secret_file(s.for_launcher(), 0644);
  EXPECT_EQ(refusal(open_to_all), "secret file " + open_to_all +
                                      ": others may read or write it (mode 0644); chmod 600 " +
                                      open_to_all);
  const std::string text = secret_file("hunter2\n", 0600);
  const std::string why = refusal(text);
  EXPECT_NE(why.find("is not a secret (64 hex digits: openssl rand -hex 32 > "), std::string::npos)
      << why;
  EXPECT_EQ(why.find("hunter2"), std::string::npos) << why;  // never echoed
  EXPECT_EQ(refusal("/nonexistent/fleet.key"),
            "secret file /nonexistent/fleet.key: No such file or directory");
  EXPECT_EQ(refusal("/tmp"), "secret file /tmp: not a regular file");
}

}  // namespace
}  // namespace rocehil::channel
