#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rocehil::iperf {

// What one iperf3 process printed with --json, read back into numbers. Field names are iperf3's
// (src/iperf_api.c, iperf_print_results, 3.12): `end.sum_sent` and `end.sum_received` are the
// test's totals over all streams, each as its side measured it; the client's document holds
// both (the server sends its numbers back at the end), the server's its own receive side and an
// empty send side.
struct Sum {
  double seconds = 0;
  std::uint64_t bytes = 0;
  double bits_per_second = 0;
  // TCP, sum_sent: segments the sender's kernel retransmitted (tcpi_total_retrans); absent for
  // UDP and where iperf3 could not read it.
  std::optional<std::uint64_t> retransmits;
  // UDP: datagrams. In sum_received, `packets` is the highest sequence number the receiver saw
  // (received + lost, iperf_udp.c) and `lost_packets` the gaps in the sequence (cnt_error);
  // iperf3's lost_percent is 100 * lost / packets.
  std::optional<std::uint64_t> packets;
  std::optional<std::uint64_t> lost_packets;
  std::optional<double> jitter_ms;
};

struct Report {
  std::string version;                          // start.version: "iperf 3.12"
  std::string protocol;                         // start.test_start.protocol: "TCP" or "UDP"
  std::optional<std::uint32_t> streams;         // start.test_start.num_streams
  std::optional<int> tos;                       // start.test_start.tos
  std::optional<double> duration_s;             // start.test_start.duration
  std::optional<std::uint64_t> target_bitrate;  // start.test_start.target_bitrate; 0: unlimited
  std::optional<Sum> sent, received;
  // iperf3's own words when the test failed ("unable to connect to server: Connection refused");
  // empty when it did not say.
  std::string error;
};

// A report, or why none could be read ("not JSON: ...", "no 'start' object").
struct ParseResult {
  std::optional<Report> report;
  std::string error;
};

// Never throws and never crashes, whatever the bytes.
ParseResult parse_json(std::string_view json_text);

}  // namespace rocehil::iperf
