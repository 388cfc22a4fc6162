#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rocehil::iperf {

// One side of an iperf3 run, in rocehil's terms. The client sends to the server (iperf3's
// default direction); the server takes the test's settings (protocol, duration, rate, TOS) from
// the client over iperf3's control connection, so only the client's command carries them.
struct CommandOptions {
  bool server = false;         // -s -1 (one test, then exit); else -c `connect_to`
  std::string bind;            // -B: the local address (the host's RoCE address); required
  std::string connect_to;      // client: the server's address
  std::uint16_t port = 5201;   // -p: the server's control port (and its data port)
  bool udp = false;            // -u
  std::uint32_t seconds = 10;  // client -t: whole seconds (iperf3 reads -t with atoi)
  std::uint64_t rate_bps = 0;  // client -b, bits/s; 0: unlimited (TCP only)
  int tos = -1;                // client -S: the IP TOS byte (DSCP << 2 | ECN); -1: iperf3's 0
  std::uint32_t streams = 1;   // client -P
};

// iperf3's own limits (iperf.h MAX_STREAMS 128; iperf_api.c: -t at most 86400 s), checked here
// so the message names the setting rather than iperf3's flag.
inline constexpr std::uint32_t max_streams = 128;
inline constexpr std::uint32_t max_seconds = 86400;

// The command as words for execvp, program first ("iperf3"), always --json. Throws
// rocehil::Error (bad input) for what iperf3 would refuse, and for UDP without a rate (iperf3
// would send 1 Mbit/s unsaid) or an address that is not an IP literal.
std::vector<std::string> command_words(const CommandOptions& options);

}  // namespace rocehil::iperf
