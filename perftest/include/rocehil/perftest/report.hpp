#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rocehil::perftest {

// What one perftest run (ib_write_bw, ib_send_lat, ...) printed, read back into numbers.
// perftest reports in two shapes: the table on stdout, which every version prints, and the file
// `--out_json --out_json_file=F` writes (perftest 5.98 and later). That file is JSON in name only:
// its keys are bare words and its objects end in trailing commas, so it has its own reader.

enum class Tool : std::uint8_t { write_bw, read_bw, send_bw, write_lat, read_lat, send_lat };

std::string_view to_string(Tool tool);                  // "write_bw"
std::string_view program(Tool tool);                    // "ib_write_bw"
std::optional<Tool> tool_named(std::string_view name);  // "write_bw" or "ib_write_bw"
bool is_bandwidth(Tool tool);

// One row of a bandwidth table: "#bytes #iterations BW peak BW average MsgRate".
struct BwRow {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  // In Gbit/s (1e9 bits) whatever the table's unit: perftest's MB/sec is MiB/s (2^20 bytes),
  // converted here, so a run without --report_gbits reads the same.
  // Absent where perftest did not measure it: it then prints "BW peak won't be measured in this
  // run" and a peak of exactly 0 (perftest_parameters.c: noPeak is turned on for runs by
  // duration, a receiving server side that is not bidirectional, run_infinitely and more than
  // 20000 iterations, or by -N; the peak is then computed as 0 * ...).
  std::optional<double> peak_gbps;
  double average_gbps = 0;
  double msg_rate_mpps = 0;
};

// One row of a latency table, in microseconds. Iteration runs print every column; duration runs
// (-D) print only the average and the transactions per second, so the others are absent.
struct LatRow {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  std::optional<double> min_us, max_us, typical_us, avg_us, stdev_us, p99_us, p999_us;
  std::optional<double> tps;  // duration runs: transactions per second
};

struct Report {
  // Which shape was read, for a person checking the numbers against perftest's own output:
  // "perftest --out_json file" or "perftest stdout table (Gb/sec)", "(MB/sec)", "(latency)",
  // "(latency, duration)".
  std::string layout;
  std::string test;        // "RDMA_Write BW Test" (text) or "RDMA_Write_BW_Test" (json)
  std::string device;      // "mlx5_0"
  std::string connection;  // "RC", "UD"
  std::string link_type;   // "Ethernet", "IB"
  std::optional<std::uint32_t> qps;
  std::optional<std::uint32_t> mtu;  // bytes
  std::optional<BwRow> bw;           // exactly one of bw and lat is set
  std::optional<LatRow> lat;
};

// A report, or why none could be read ("no result row after the '#bytes' header", ...).
struct ParseResult {
  std::optional<Report> report;
  std::string error;
};

// Never throw and never crash, whatever the bytes (a fuzz target holds them to that).
ParseResult parse_text(std::string_view stdout_text);
ParseResult parse_json(std::string_view out_json_text);

// perftest's own words for why a run failed, as it printed them on stderr or stdout: the lines
// that say what went wrong ("Did not detect devices", "Couldn't connect to 198.18.1.2:18515",
// "Unable to init the socket connection"), joined with "; ", most telling first; empty when
// the output holds none. Warnings (CPU frequency) are not errors.
std::string find_error(std::string_view output);

}  // namespace rocehil::perftest
