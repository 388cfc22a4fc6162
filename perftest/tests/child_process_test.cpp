#include "rocehil/perftest/child_process.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rocehil/common/error.hpp"

namespace rocehil::perftest {
namespace {

using namespace std::chrono_literals;

void run_to_end(ChildProcess& p) {
  for (int i = 0; i < 1000 && !p.poll(50ms); ++i) {
  }
}

TEST(ChildProcess, WordsReachTheProgramUnsplitAndBothStreamsAreKept) {
  ChildProcess p(
      {"sh", "-c", "printf '%s|' \"$@\"; echo oops >&2; exit 3", "sh", "a b;c", "$(id)", "'q'"});
  run_to_end(p);
  EXPECT_EQ(p.out(), "a b;c|$(id)|'q'|");
  EXPECT_EQ(p.err(), "oops\n");
  EXPECT_EQ(p.exit_code(), 3);
}

TEST(ChildProcess, ASignalEndsItAndTheExitCodeSaysWhich) {
  ChildProcess p({"sleep", "30"});
  EXPECT_FALSE(p.poll(10ms));
  p.signal(SIGTERM);
  run_to_end(p);
  EXPECT_EQ(p.exit_code(), -SIGTERM);
}

TEST(ChildProcess, AProgramThatIsNotThereIsAnErrorNotAHang) {
  EXPECT_THROW(ChildProcess({"/nonexistent/ib_write_bw"}), Error);
  EXPECT_FALSE(find_on_path("rocehil-no-such-program"));
  const auto sh = find_on_path("sh");
  ASSERT_TRUE(sh);
  EXPECT_EQ(sh->back(), 'h');
  EXPECT_EQ(find_on_path("/bin/sh"), "/bin/sh");
}

// Two rows as this machine's /proc/net/tcp printed them (Debian 12, kernel 6.1): sshd
// listening on 22 (0x0016) and an established connection from port 2024 (0x07E8).
constexpr std::string_view proc_net_tcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n"
    "   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
    "0 21790 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:07E8 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        "
    "0 573 1 0000000000000000 20 4 30 10 -1\n";

TEST(TcpListening, OnlyAListeningRowOfThatPortCounts) {
  EXPECT_TRUE(listens_on(proc_net_tcp, 22));
  EXPECT_FALSE(listens_on(proc_net_tcp, 2024));    // established, not listening
  EXPECT_FALSE(listens_on(proc_net_tcp, 0x9C40));  // a remote port
  EXPECT_FALSE(listens_on("", 22));
  EXPECT_FALSE(listens_on("header only\n", 22));
  EXPECT_FALSE(listens_on("header\n   0: 00000000:zz16 00000000:0000 0A\n", 22));
}

TEST(TcpListening, SeesASocketOfThisHostListenAndStop) {
  const std::uint16_t port = free_tcp_port();
  ASSERT_NE(port, 0);
  EXPECT_FALSE(tcp_port_listening(port));
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_FALSE(tcp_port_listening(port));  // bound is not listening
  ASSERT_EQ(listen(fd, 1), 0);
  EXPECT_TRUE(tcp_port_listening(port));
  close(fd);
  EXPECT_FALSE(tcp_port_listening(port));
}

}  // namespace
}  // namespace rocehil::perftest
