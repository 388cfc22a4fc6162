// libFuzzer: the controller's side of the channel handshake fed whatever a peer could send first.
// The listener accepts connections from anyone who can reach it, so these bytes are the most
// exposed input rocehil reads. Properties: no crash or sanitizer report, and no input
// authenticates (none can hold the run's secret, drawn here per process).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "rocehil/channel/tls_session.hpp"

namespace ch = rocehil::channel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ch::TlsContext context(ch::Side::controller, ch::RunSecret::generate(), "fuzz");
  // The socket buffer takes any input libFuzzer's -max_len allows in one write.
  if (size > 16384) return 0;
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends) != 0) std::abort();
  if (size > 0 && ::write(ends[0], data, size) != static_cast<ssize_t>(size)) std::abort();
  ::shutdown(ends[0], SHUT_WR);  // the peer says nothing more: every path ends
  {
    ch::TlsSession session(context, ends[1]);
    ch::Step step = ch::Step::want_read;
    for (int i = 0; i < 16 && (step == ch::Step::want_read || step == ch::Step::want_write); ++i)
      step = session.handshake();
    if (step == ch::Step::done) {
      std::fprintf(stderr, "fuzz_channel_handshake: bytes without the secret authenticated\n");
      std::abort();
    }
  }
  ::close(ends[0]);
  ::close(ends[1]);
  return 0;
}
