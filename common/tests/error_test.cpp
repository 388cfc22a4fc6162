#include "rocehil/common/error.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace rocehil {
namespace {

TEST(Error, InputErrorIsExitCodeTwoWithTheMessage) {
  const Error e = input_error("fabric.yaml:14:9: host 'h3': unknown nic");
  EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
  EXPECT_EQ(static_cast<int>(e.exit_code()), 2);
  EXPECT_STREQ(e.what(), "fabric.yaml:14:9: host 'h3': unknown nic");
  EXPECT_EQ(e.code(), 0);
}

TEST(Error, SystemErrorAppendsStrerrorAndKeepsErrno) {
  const Error e = system_error("open /nope/x.pcap", ENOENT);
  EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
  EXPECT_EQ(e.code(), ENOENT);
  EXPECT_STREQ(e.what(), "open /nope/x.pcap: No such file or directory");
}

}  // namespace
}  // namespace rocehil
