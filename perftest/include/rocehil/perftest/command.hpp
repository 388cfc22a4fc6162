#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rocehil/perftest/report.hpp"

namespace rocehil::perftest {

// One side of a perftest run, in rocehil's terms. Both sides get the same test settings (size,
// QPs, duration or iterations, connection, bidirectional, MTU, traffic class): perftest expects
// that, and a mismatch shows up as a hang or a wrong number rather than an error.
struct CommandOptions {
  Tool tool = Tool::write_bw;
  std::string device;            // -d; empty: perftest's first device
  std::uint8_t ib_port = 1;      // -i
  int gid_index = -1;            // -x; -1: perftest chooses (it prefers a RoCEv2 GID)
  std::uint64_t size = 65536;    // -s, bytes
  std::uint32_t qps = 1;         // -q; bandwidth tools only
  std::uint32_t tx_depth = 0;    // -t; bandwidth tools only; 0: perftest's default (128)
  std::uint32_t seconds = 0;     // -D, whole seconds as perftest takes them; 0: by iterations
  std::uint64_t iterations = 0;  // -n; 0 with seconds 0: perftest's default
  std::uint32_t mtu = 0;         // -m; 0: the port's active MTU
  int traffic_class = -1;        // --tclass, the IP TOS byte in the GRH; -1: perftest's (0)
  int sl = -1;                   // --sl, the service level (RoCE: the VLAN PCP); -1: perftest's (0)
  // -I: messages up to this size go inline in the WQE; -1: perftest's default (its latency
  // tests inline up to 220-236 B, its bandwidth tests nothing). WRITE and SEND only.
  int inline_bytes = -1;
  bool bidirectional = false;      // -b; bandwidth tools only
  bool ud = false;                 // -c UD; send tools only, size at most the MTU
  std::uint16_t tcp_port = 18515;  // -p, perftest's own handshake
  std::string server;              // client: the server's address (the last word); server: empty
  std::string json_file;           // --out_json --out_json_file=F; empty: the stdout table only
  // Pacing (bandwidth tools, the sending side): perftest's software limiter over all the run's
  // QPs, in payload Gbit/s (--rate_limit=R --rate_units=g --rate_limit_type=SW); 0: none.
  double rate_gbps = 0;
};

// The command as words for execvp, never a shell line: program first ("ib_write_bw"), then
// every option as its own word, so no value is ever split or interpreted. Always
// --report_gbits (the table in Gbit/s, as rocehil reports). Throws rocehil::Error (bad input)
// for what perftest would refuse: an option the tool lacks (-q on a latency tool), a value out
// of its range, a server address that is not an IP literal.
std::vector<std::string> command_words(const CommandOptions& options);

}  // namespace rocehil::perftest
