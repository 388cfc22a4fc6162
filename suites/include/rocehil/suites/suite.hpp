#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/inventory/load.hpp"
#include "rocehil/settings/assignment.hpp"
#include "rocehil/suites/rate.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::suites {

// A qualification suite (schema_version 1; docs/suites.md): tests, each a workload on a
// selection of hosts with its settings and thresholds, and the captures that run beside them.
// Any setting given as a list is a sweep: the cross product of a test's lists is its cases.

using inventory::Diagnostic;
using inventory::SourceLocation;

// workload iperf3: background traffic that is not RDMA (docs/suites.md, "iperf3 background
// traffic"); its own keys, refused on every other workload.
struct Iperf3Settings {
  std::string protocol = "tcp";  // tcp | udp (udp needs a rate)
  std::uint32_t streams = 1;     // iperf3 -P, 1-128
};

// The settings of one test; every list holds one value or a sweep.
struct TestSettings {
  std::string hosts = "all";   // a host selection (docs/inventory.md)
  SourceLocation hosts_where;  // where `hosts:` was written (the test's or the defaults'); 0: not
  std::string provider;        // soft | verbs; empty: each host's provider from the inventory
  // bw, lat: rocehil (the provider's own workloads) | perftest (Debian's ib_*_bw / ib_*_lat,
  // run by the agents on the hosts' RDMA devices)
  std::string engine = "rocehil";
  std::vector<std::uint64_t> sizes{1 << 20};  // bytes
  std::vector<std::uint32_t> qps{1};          // per connection
  std::vector<std::string> strategies{"split"};
  std::vector<std::string> placements{"packed"};
  std::vector<int> traffic_classes{106};  // DSCP 26 with ECT(0)
  SourceLocation traffic_class_where;     // where `traffic_class:` was written; 0: not written
  std::string opcode = "write";           // bw
  std::string transport = "rc";           // bw: rc | ud (SEND of one packet per message)
  std::string memory = "host";            // bw, lat: host | gpu (the GPU paired with the NIC)
  double duration_s = 2;                  // bw; a collective whose test writes it (below)
  // A collective (or incast) test that writes duration_s and not iterations runs for about that
  // long: its iterations are chosen from one iteration's time (docs/suites.md).
  bool collective_by_duration = false;
  std::uint64_t iterations = 20;  // collectives, lat
  std::uint64_t warmup = 5;       // iterations (collectives, lat)
  int repeats = 1;                // runs of each case, kept as samples
  int rounds = 3;  // calibrate_bw, calibrate_lat: rocehil and perftest runs each, interleaved
  int pipeline = 8;
  // bw: the payload bytes each QP connection sends, as whole messages of `size`, instead of
  // running for duration_s; no warm-up, all of it measured (docs/suites.md, "Volume"). 0: by
  // duration_s. bytes_where: where `bytes:` was written (0: not written).
  std::uint64_t bytes = 0;
  SourceLocation bytes_where;
  // The QPs' path MTU (256, 512, 1024, 2048 or 4096; a UD message is one packet of at most this),
  // the send queue depth (WRs in flight per QP), and the service level (RoCE: the VLAN priority,
  // for fabrics that trust PCP rather than DSCP; verbs only). Both engines take them.
  std::uint32_t mtu = 1024;
  std::uint32_t tx_depth = 64;
  int sl = 0;
  // The QPs' ACK timeout as verbs' exponent (4.096 us x 2^N; NCCL_IB_TIMEOUT is the same
  // number; 20 since NCCL 2.23): how long a request waits for its ACK before it is sent again.
  // 14: 67 ms.
  int ack_timeout = 14;
  // How fast each sender sends (docs/suites.md, "Pacing"); empty: as fast as it can.
  std::optional<Rate> rate;
  SourceLocation rate_where;          // where `rate:` was written; 0: not written
  std::vector<std::string> captures;  // capture points (inventory names) running during the test
  std::vector<SourceLocation> captures_where;  // where each was written; empty: not known
  Iperf3Settings iperf3;                       // workload iperf3 only
  // `traffic_class: {per_qp: [...]}`: QP i of each connection gets item i % n, in one case
  // (traffic_classes then holds its first item); empty: every QP has traffic_classes' class.
  std::vector<int> per_qp_traffic_classes{};
};

// A fault injected while a test's traffic runs, as `rocehil inject pfc|pause` sends it: pause
// frames out of one end of an inventory link. `from` is that end: a host (reached over ssh) or a
// switch the controller can enter (a testbed's network namespace).
struct Injection {
  std::string kind = "pfc";  // pfc | pause (802.3x)
  std::string from;
  std::string link;
  std::vector<int> priorities{3};  // pfc
  std::uint32_t quanta = 65535;
  double pps = 10000;
  double duration_s = 0.5;
  double after_s = 0.5;  // from the traffic's start
  SourceLocation where;
};

// One kind of traffic of a test that runs several at once (`parts:`; docs/suites.md, "Parts"):
// two pairs at once, an incast beside a broadcast, RoCE beside background traffic. Every part
// runs in each of the test's cases, all starting at one agreed time (plus start_after_s), and
// its metrics are named by it: roce.busbw_gbps.
struct Part {
  std::string name;          // letters, digits and _: it prefixes its metrics in thresholds
  std::string workload;      // bw, lat or a collective pattern
  TestSettings settings;     // the test's, with the part's own keys over them; one value each
  double start_after_s = 0;  // from the case's agreed start
  double stagger_s = 0;      // between one sender's start and the next's (a collective's ranks)
  SourceLocation where;
};

// Something done to the fabric while a test's traffic runs (docs/suites.md, "Events"), at_s
// seconds after the traffic's agreed start: a link or a host's NIC taken down or up, PFC sent
// (the test's `inject:` is read as one), or a command the inventory names run on a host or switch.
enum class EventAction { link_down, link_up, nic_down, nic_up, pfc, command };
std::string_view to_string(EventAction action);

struct Event {
  double at_s = 0;
  EventAction action = EventAction::pfc;
  std::string link;          // link_down, link_up: an inventory link
  std::string host;          // nic_down, nic_up; command: run on this host
  std::string switch_name;   // command: run on this switch (one of host and switch_name)
  std::string command;       // command: a name in that host's or switch's inventory `commands:`
  Injection pfc{};           // pfc: what is sent, as `inject` takes it (its after_s is at_s)
  bool from_inject = false;  // written as the test's `inject:`
  SourceLocation where;
};

struct SuiteTest {
  std::string name;
  std::string workload;  // bw | lat | a collective pattern (allreduce, alltoall, ...)
  TestSettings settings;
  std::vector<Threshold> thresholds;
  bool expect_fail = false;  // the test exists to show the harness catching a fault
  std::optional<Injection> inject;
  // `settings:` of the test: fabric settings in force for its cases only, over the suite's (and
  // under --set's, which a bisection or a person asked for the whole run). Applied before its
  // first case, read back, journaled, and put back after its last, so "DCQCN off, then on" is
  // two tests of one suite.
  std::vector<settings::Assignment> fabric_settings;
  std::vector<Part> parts;  // empty: the test is its one workload, as before parts
  // `events:` and `inject:` (as a pfc event), in the order they happen (by at_s).
  std::vector<Event> events;
  SourceLocation where;
};

// The workload a test with parts records (each part has its own).
inline constexpr std::string_view parts_workload = "parts";

// A part as a test of its own (its name, workload and settings, nothing else), for what runs and
// checks one workload.
SuiteTest test_of_part(const SuiteTest& test, const Part& part);

// What a calibrate workload measures with both engines: calibrate_bw is bw, calibrate_lat lat;
// any other workload is itself.
inline std::string_view measured_workload(const SuiteTest& test) {
  if (test.workload == "calibrate_bw") return "bw";
  if (test.workload == "calibrate_lat") return "lat";
  return test.workload;
}
inline bool is_calibration(const SuiteTest& test) {
  return test.workload == "calibrate_bw" || test.workload == "calibrate_lat";
}

// bw and lat (and their calibrations) and iperf3 run between two hosts; every other workload is
// a collective over all the ranks.
// The microseconds of verbs' ACK timeout exponent `exponent` (4.096 us x 2^exponent), as the
// agent protocol carries it.
inline std::uint32_t ack_timeout_us(int exponent) {
  return static_cast<std::uint32_t>((std::uint64_t{4096} << exponent) / 1000);
}

inline bool is_point_to_point(const SuiteTest& test) {
  const std::string_view w = measured_workload(test);
  return w == "bw" || w == "lat" || w == "iperf3";
}

struct CaptureDefaults {
  std::string filter = "roce";  // all | roce | cnp-pfc
  std::uint32_t snaplen = 128;
  // Which attempts' pcapng files the run keeps in its directory: never, failed (an attempt that
  // did not pass: fail, warn, error, an unexpected pass) or always. Each capture point keeps at
  // most keep_mb of an attempt (its newest frames), the run at most keep_total_mb in all.
  std::string keep = "never";
  std::uint32_t keep_mb = 64;
  std::uint32_t keep_total_mb = 4096;
};

struct Suite {
  int schema_version = 1;
  std::string name;
  std::string description;
  std::string file;
  CaptureDefaults capture;
  // `settings:`: the fabric settings set before the first case and put back after the last
  // (rocehil run --set adds to and overrides them).
  std::vector<settings::Assignment> settings;
  // `baseline:`: the run whose metrics baseline.<metric> names, read from the run history:
  // "last-qualified" (the newest run of this suite that exited 0) or a run id (a unique prefix
  // will do). Empty: none; rocehil run --baseline gives or overrides it.
  std::string baseline;
  std::vector<SuiteTest> tests;
};

inline constexpr std::string_view last_qualified_baseline = "last-qualified";

// One case of a test: one value of every setting.
struct TestCase {
  std::string id;        // "allreduce/size=64M/qps=8": the test's name and every swept value
  std::size_t test = 0;  // index in Suite::tests
  std::uint64_t size = 0;
  std::uint32_t qps = 1;
  std::string strategy;
  std::string placement;
  int traffic_class = 0;
  // QP i of each connection gets item i % n (its first is traffic_class); empty: every QP
  // gets traffic_class.
  std::vector<int> per_qp_traffic_classes{};
};

struct SuiteLoadResult {
  std::optional<Suite> suite;
  std::vector<Diagnostic> diagnostics;  // every problem, in file order
  // With diagnostics: what could be read, what was wrong left out (a refused threshold is not
  // in its test), so the suite can still be held against an inventory and every problem of
  // both told at once (suite validate -i, run) rather than the inventory's only once the
  // file's are fixed. Never run.
  std::optional<Suite> partial;
};

SuiteLoadResult parse_suite(std::string_view text, const std::string& file);
SuiteLoadResult parse_suite_file(const std::string& file);
// Throws rocehil::Error (bad input) with every diagnostic, one per line.
Suite load_suite(const std::string& file);

// Every case of every test, tests in file order, sweeps in the order of TestCase's fields.
std::vector<TestCase> expand(const Suite& suite);

// "64K", "1M", "1G" when the size is a whole multiple, else the bytes.
std::string size_label(std::uint64_t bytes);
// "65536", "64K", "1M", "1G": binary multiples; nothing when it is not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace rocehil::suites
