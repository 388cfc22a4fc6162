// Progress frames go to a terminal and nowhere else: a log (a file, a pipe) gets none, so
// `rocehil inventory check 2>file` holds only what the command says of its own accord.
#include "shared/progress.hpp"

#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace rocehil::cli {
namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(Progress, AFileGetsNoFrames) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    Progress p("check", "hosts", 5, file, std::chrono::milliseconds(0));
    for (std::uint64_t i = 0; i <= 5; ++i) p.update(i);
    p.finish();
  }
  std::fflush(file);
  EXPECT_EQ(std::ftell(file), 0L);
  std::fclose(file);
}

TEST(Progress, ATerminalGetsABarAndItIsClearedAtTheEnd) {
  int controller = -1, terminal = -1;
  ASSERT_EQ(openpty(&controller, &terminal, nullptr, nullptr, nullptr), 0);
  std::FILE* out = fdopen(terminal, "w");
  ASSERT_NE(out, nullptr);
  {
    Progress p("check", "hosts", 5, out, std::chrono::milliseconds(0));
    p.update(2);
    p.finish();
  }
  std::fclose(out);  // closes the terminal side: the reads below end
  const std::string seen = read_all(controller);
  ::close(controller);
  EXPECT_NE(seen.find("\r\033[Kcheck ["), std::string::npos) << seen;
  EXPECT_NE(seen.find("2 hosts of 5 hosts"), std::string::npos) << seen;
  EXPECT_EQ(seen.substr(seen.size() - 4), "\r\033[K");  // cleared: the next line starts clean
}

}  // namespace
}  // namespace rocehil::cli
