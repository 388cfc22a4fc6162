#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "rocehil/common/scheduling.hpp"
#include "rocehil/iperf/command.hpp"
#include "rocehil/iperf/report.hpp"
#include "rocehil/perftest/command.hpp"
#include "rocehil/perftest/report.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/traffic/nic_counters.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {

// The agent protocol: one JSON object per line on the agent's stdin (requests from the controller)
// and stdout (replies and events from the agent). The control plane rides an SSH session's stdio,
// so no port is opened. Every message carries "v" (the protocol version) and "op"; a request may
// carry "id" (an unsigned integer), which the agent copies into the replies it causes.
//
// Conversation (docs in README, "The agent protocol"):
//   hello                 -> hello    (version, providers, workloads, devices)
//   setup {...}           -> setup    (the local endpoints: one per QP)
//   connect {peers}       -> connected
//   start {at_ns, ...}    -> started, then stats every stats_ms, then results when the work ends
//   stop                  -> results  (of the running workload, ended early)
//   capture_start {...}   -> capture_started, then capture_summary when its seconds are over
//   capture_stop          -> capture_summary (frames, drops, coverage, files, the analysis)
//   perftest {...}        -> perftest_listening (server, once perftest listens), then
//                            perftest_results when perftest exits; stop ends it early
//   iperf3 {...}          -> iperf3_listening (server, once iperf3 listens), then iperf3_results
//                            when iperf3 exits; stop ends it early
//   settings {action,...} -> settings (apply: journaled and read back; restore: from the host's
//                            journal; read: the values in force), never while traffic runs
// Captures run beside traffic, one at a time, on the host wired to a mirror port.
// A request that is not valid JSON, has an unknown op, an unknown field, a wrong type, a number
// out of range or arrives in the wrong state gets an `error` reply naming the field and the fix;
// the agent goes on reading. When stdin closes the agent stops its traffic and exits.

inline constexpr int agent_protocol_version = 1;
// The fastest rate a sender may be paced to, in bits per second: 1.6 Tbit/s, as suites' rate:.
inline constexpr double max_rate_bps = 1.6e12;
// A line carries one endpoint per QP (setup's reply, connect's peers: ~230 bytes each) and one
// result per QP: 16384 QPs (the SONiC plan's 4K+ endpoints per port, and more) need ~4 MiB.
inline constexpr std::size_t max_agent_line_bytes = std::size_t{16} << 20;
inline constexpr std::uint32_t max_agent_qps = 16384;
// A collective rank reports each step's wait and time up to this many steps (CollectiveReport).
inline constexpr std::size_t max_steps_reported = 1024;

enum class Workload : std::uint8_t { bw, lat, collective };
enum class Role : std::uint8_t {
  client,  // bw: posts the traffic (the requester); lat: sends the pings
  server,  // bw: the target of WRITE/READ/SEND; lat: answers the pings
};
std::string_view to_string(Workload workload);
std::string_view to_string(Role role);

// ---- requests (controller -> agent) ----

struct HelloRequest {};

// One rank of a collective (workload "collective"). The agent builds the same plan as the
// controller from these fields, so peers, steps and buffers agree without being sent.
struct CollectiveSetup {
  std::string pattern = "allreduce";  // a traffic::Pattern name
  std::uint32_t ranks = 2;            // 2..65536
  std::uint32_t rank = 0;             // < ranks
  std::uint32_t ranks_per_host = 1;   // hierarchical_allreduce: divides ranks
  std::uint32_t pipeline = 8;         // broadcast, tree_allreduce: 1..1024
  std::uint64_t seed = 1;             // permutation: which one
  std::string strategy = "split";     // QP scaling: split | round_robin
  std::uint64_t sport_seed = 1;       // UDP source ports drawn from it unless udp_sports pins them
};

struct SetupRequest {
  std::string provider = "soft";  // soft | verbs
  std::string device;             // verbs: RDMA device name (mlx5_0); empty: the first
  std::uint8_t port = 1;          // 1..255
  int gid_index = -1;             // -1 (pick the RoCEv2 GID carrying `address`) .. 255
  std::string address;            // required: the local IP traffic uses (IPv4 or IPv6 literal)
  Workload workload = Workload::bw;
  Role role = Role::client;
  traffic::Opcode opcode = traffic::Opcode::write;  // send, write, write_with_imm, read
  std::uint32_t qps = 1;                            // 1..max_agent_qps; lat: 1
  std::uint32_t message_bytes = 65536;              // 1..1 GiB; qps * message_bytes <= 4 GiB
  std::uint32_t tx_depth = 64;                      // 1..4096
  std::uint32_t mtu = 1024;                         // 256, 512, 1024, 2048 or 4096
  std::uint8_t traffic_class = 0;                   // IP TOS byte: DSCP << 2 | ECN
  std::uint8_t sl = 0;                              // service level: the VLAN PCP (0-7)
  std::vector<std::uint16_t> udp_sports;            // empty, or one per QP, each 1..65535
  bool bidirectional = false;                       // bw: both sides send and serve
  // bw: rc, or ud (SEND of messages of one packet, message_bytes <= mtu; no udp_sports).
  traffic::QpType transport = traffic::QpType::rc;
  // bw, lat: the GPU whose memory the QPs send from and receive into (verbs: dma-buf, else peer
  // memory); -1: host memory.
  int gpu = -1;
  std::uint8_t retry_count = 7;          // 0..7
  std::uint32_t ack_timeout_us = 67108;  // 1..60,000,000; as verbs timeout 14
  // soft: the speed of the NIC's port (the inventory's link_gbps), which the provider paces its
  // QPs to and starts DCQCN at; 0: not known. verbs ignores it. [0, 10000].
  double link_gbps = 0;
  // bw, the side that sends (client, or either side of a bidirectional run): what it sends in
  // all over its QPs, in payload bits per second (the controller resolves a suite's "55%" against
  // the NIC's link first); 0: unpaced. (0, max_rate_bps]. The NIC's limiter where the device
  // has one (verbs), else the engine's token bucket; results' `pacing` says which.
  double rate_bps = 0;
  // Required with workload "collective", refused otherwise. Then `qps` is per connection (each
  // peer of the rank gets that many), `message_bytes` is the collective's size, and setup
  // reports one endpoint per QP: peer by peer in ascending rank, qps each.
  std::optional<CollectiveSetup> collective;
  // Empty, or 1..qps classes spread over the QPs (of each connection, in a collective): QP i
  // gets item i % n in place of traffic_class (traffic_class_of_qp).
  std::vector<std::uint8_t> traffic_classes{};
};

// The class QP `qp` of a connection is created with: traffic_classes spread round the QPs, else
// the one traffic_class.
inline std::uint8_t traffic_class_of_qp(const SetupRequest& s, std::size_t qp) {
  return s.traffic_classes.empty() ? s.traffic_class
                                   : s.traffic_classes[qp % s.traffic_classes.size()];
}

// A peer QP as setup reports it and connect passes it on: where it is and the memory it exposes.
struct PeerEndpoint {
  traffic::Endpoint endpoint;
  std::uint64_t remote_address = 0;
  std::uint32_t rkey = 0;
};

struct ConnectRequest {
  std::vector<PeerEndpoint> peers;  // 1..max_agent_qps, one per local QP, in QP order
};

struct StartRequest {
  std::int64_t at_ns = 0;                 // wall clock (Unix time, ns) to start at; 0: at once
  double seconds = 2;                     // bw without iterations: measured duration, (0, 86400]
  std::uint64_t iterations = 0;           // bw: messages after warm-up; lat: ping-pongs; <= 1e12
  double warmup_seconds = 0.2;            // bw: [0, 3600]
  std::uint64_t warmup_iterations = 100;  // lat: <= 1e9
  std::uint32_t stats_ms = 1000;          // period of stats events; 0: none; else 10..3,600,000
  // bw by volume (a suite's bytes:): each QP sends exactly this many messages, no warm-up, and
  // seconds, iterations and warmup_seconds are unused; 0: not by volume. <= 1e12; bw only.
  std::uint64_t messages_per_qp = 0;
};

struct StopRequest {};

// A capture on this host, as `rocehil capture` runs it.
struct CaptureStartRequest {
  std::string backend = "pcap";  // pcap | dpdk
  std::string iface;             // pcap: the interface (required); dpdk: the port name, optional
  std::string dpdk_args;         // dpdk: the EAL arguments (required); printable, <= 2048 chars
  std::string filter = "all";    // all | roce | cnp-pfc
  std::uint32_t snaplen = 128;   // 64..262144
  std::string write;             // pcapng path on this host; empty: analyse only
  double seconds = 0;            // 0: until capture_stop; else (0, 86400]
  std::uint32_t ring_files = 0;  // with ring_mb: keep the newest N files
  std::uint32_t ring_mb = 0;
  std::uint32_t buffer_mb = 64;  // pcap kernel ring, 1..1024
  double link_gbps = 0;          // 0: the interface's speed, else 100
  std::uint32_t max_flows = 64;  // flows listed in the summary's analysis, 0..100000
  // Pause accounting, as `rocehil capture --storm-ms --direction --spine-mac`:
  double storm_ms = 100;                // (0, 3,600,000]
  std::string direction = "unknown";    // unknown | leaf-to-spine | spine-to-leaf
  std::vector<std::string> spine_macs;  // "aa:bb:cc:dd:ee:ff" (lower case), at most 256
  // A remote mirror session to take (ERSPAN session ID or GRE key), and the switch it comes
  // from (an IP literal); absent: a local mirror port.
  std::optional<std::uint32_t> remote_session;
  std::optional<std::string> remote_source;
};

struct CaptureStopRequest {};

// perftest as the engine (Debian's ib_write_bw, ib_send_lat, ...): the agent builds the command
// from these fields itself (perftest::command_words), so no word of it comes from the wire, and
// runs it without a shell. The server side goes first and answers perftest_listening once
// perftest listens; the client side then connects to that port.
struct PerftestRequest {
  Role role = Role::client;
  std::string tool = "write_bw";  // write_bw, read_bw, send_bw, write_lat, read_lat, send_lat
  std::string device;             // empty: perftest's first device
  std::uint8_t port = 1;
  int gid_index = -1;  // -1: perftest chooses
  std::uint64_t size = 65536;
  std::uint32_t qps = 1;         // bandwidth tools
  std::uint32_t tx_depth = 0;    // bandwidth tools; 0: perftest's default
  std::uint32_t seconds = 0;     // -D; 0: by iterations
  std::uint64_t iterations = 0;  // -n; 0 with seconds 0: perftest's default
  std::uint32_t mtu = 0;         // 0: the port's active MTU
  int traffic_class = -1;        // the IP TOS byte; -1: perftest's
  int sl = -1;                   // the service level (VLAN PCP); -1: perftest's (0)
  int inline_bytes = -1;         // -I; -1: perftest's default; WRITE and SEND tools only
  bool bidirectional = false;
  traffic::QpType transport = traffic::QpType::rc;  // ud: send tools only
  std::string server;          // client: the server's IPv4 address (perftest's handshake)
  std::uint16_t tcp_port = 0;  // client: the port the server listens on; server: 0 picks one
  // How long perftest may run before the agent kills it; 0: the run's seconds (or one second per
  // 10,000 iterations) plus 60.
  double timeout_s = 0;
  // Bandwidth tools, the side that sends: perftest's software limiter, in payload bits per
  // second over all the run's QPs; 0: unpaced. (0, max_rate_bps].
  double rate_bps = 0;
};

// The command-line settings a request stands for (the TCP port and JSON file are the agent's).
perftest::CommandOptions perftest_options(const PerftestRequest& request);
// How long the agent lets perftest run before ending it: `timeout_s`, or the run's seconds (one
// second per 10,000 iterations; 10 without either) plus 60 for device setup and the handshake.
// The controller waits that long, and its reply timeout, for the results.
double perftest_time_limit_s(const PerftestRequest& request);

// iperf3 as the engine of background traffic that is not RDMA (workload iperf3): the agent builds
// the command from these fields itself (iperf::command_words) and runs it without a shell. The
// server side goes first (`iperf3 -s -1 --json` on a free port, bound to `bind`) and answers
// iperf3_listening once iperf3 listens; the client side then sends to that port.
struct Iperf3Request {
  Role role = Role::client;
  std::string protocol = "tcp";  // tcp | udp
  std::string bind;              // required: the host's RoCE address, which iperf3 binds (-B)
  std::string server;            // client: the server's address
  std::uint16_t port = 0;        // client: the server's port; server: 0 picks a free one
  std::uint32_t seconds = 2;     // client: -t, 1..86400; server: how long the test will run
  std::uint64_t rate_bps = 0;    // client: -b; 0: unlimited (TCP only: UDP needs a rate)
  int tos = -1;                  // client: -S, the IP TOS byte; -1: iperf3's (0)
  std::uint32_t streams = 1;     // client: -P, 1..128
  // client: wall clock (Unix time, ns) to start iperf3 at, so that it runs beside other traffic
  // started for the same time; 0: at once.
  std::int64_t at_ns = 0;
  // How long iperf3 may run before the agent kills it; 0: seconds plus 60.
  double timeout_s = 0;
};

// The command-line settings a request stands for (the server's port is the agent's).
iperf::CommandOptions iperf3_options(const Iperf3Request& request);
// How long the agent lets iperf3 run once it is started (at at_ns): `timeout_s`, or the test's
// seconds plus 60 for the control connection's setup and the results' exchange.
double iperf3_time_limit_s(const Iperf3Request& request);

// A fabric setting by the settings catalogue's name, with a value in its canonical form.
struct SettingValue {
  std::string name;    // "roce_rp.rpg_time_reset"
  std::string value;   // "300"; in a read request: empty
  std::string netdev;  // in a reply: the NIC it was read on; in a request: empty (every NIC)
  bool operator==(const SettingValue&) const = default;
};

enum class SettingsAction : std::uint8_t {
  apply,    // journal, write and read back `values` on every NIC of `addresses`
  restore,  // put back what the host's journal says and remove it (nothing: no journal)
  read,     // the values in force of `values`' names
  check,    // whether every NIC can take `values` (names and values), changing nothing
};
std::string_view to_string(SettingsAction action);

// The NICs of a host are named by their RoCE addresses; the agent finds their netdevs. With the
// soft provider the settings are the provider's own files for that address (the provider reads
// them at setup), under the same names.
struct SettingsRequest {
  SettingsAction action = SettingsAction::read;
  std::string host;  // the inventory's name of the host: its journal's, and messages'
  std::string provider = "verbs";
  std::vector<std::string> addresses;  // 1..16
  std::string run;                     // apply: the run (or bisection step) changing them
  std::vector<SettingValue> values;    // apply, check: names and values; read: names
  // The fabric the host is part of (its journals' directory; empty: the layout older rocehils
  // wrote) and the run's controller process, journaled as the owner (apply) or asking as it
  // (restore: its own journal is put back whatever else holds).
  std::string fabric;
  std::optional<settings::JournalOwner> owner;
  // restore: journals whose owners the controller found gone on their machine (the host could
  // not judge them: settings::OwnerState::elsewhere), and `force`, put back whatever the owner.
  std::vector<settings::JournalOwner> gone;
  bool force = false;
};

// Ends one session of a connection that carries several (an agent that dialed its controller):
// the agent stops that session's traffic and capture, releases what it holds and answers
// `ended`. On stdio it ends the only session and the agent starts afresh.
struct EndRequest {};

// The controller's answer to the hello of an agent that dialed it (session 0): admitted as the
// inventory's `host`, or refused and why, after which the controller closes the connection.
// The agent answers nothing. A detached agent returns to its launcher only now: exit 0 once
// admitted, 3 with the controller's reason when refused (pdsh -S then reports the failure).
struct AdmissionRequest {
  bool admitted = false;
  std::string host{};  // admitted: the inventory's name of the agent's host
  std::string why{};   // refused: one line for a person
};

using RequestBody =
    std::variant<HelloRequest, SetupRequest, ConnectRequest, StartRequest, StopRequest,
                 CaptureStartRequest, CaptureStopRequest, PerftestRequest, SettingsRequest,
                 EndRequest, AdmissionRequest, Iperf3Request>;

// An agent that dialed its controller serves every case of the run over one connection: each
// rank or capture the controller gives that host is a session, numbered by the controller, and
// every request and reply names its session (field 'session', absent for session 0, the only
// one on stdio). Sessions are independent state machines in the agent.
using SessionId = std::uint32_t;
inline constexpr std::size_t max_agent_sessions = 256;  // at once, per agent

struct Request {
  std::optional<std::uint64_t> id;
  RequestBody body;
  SessionId session = 0;
};

// The outcome of parsing one line: a request, or a one-line error for a person. `id` is the
// request's id whenever it could be read, so an error reply can still be matched to its request.
struct ParsedRequest {
  std::optional<Request> request;
  std::optional<std::uint64_t> id;
  SessionId session = 0;  // the request's session whenever it could be read
  std::string error;      // empty when `request` is set
};

// Never throws, never crashes, whatever the bytes (a fuzz target holds it to that).
ParsedRequest parse_request(std::string_view line);
std::string to_json_line(const Request& request);  // one line, no newline

// ---- replies and events (agent -> controller) ----

struct DeviceEntry {
  std::string name;      // soft, mlx5_0
  std::string provider;  // soft | verbs
  std::vector<std::string> addresses;
  std::string detail;
};

struct HelloReply {
  std::string version;  // rocehil version of the agent
  int protocol = agent_protocol_version;
  std::string host;  // the agent's host name
  std::vector<std::string> providers;
  std::vector<std::string> workloads;
  std::vector<DeviceEntry> devices;
  std::vector<std::string> capture_backends;  // pcap, and dpdk when its module is installed
  // Traffic engines: "rocehil" always, "perftest" when ib_write_bw is on the agent's PATH.
  std::vector<std::string> engines{"rocehil"};
};

struct SetupReply {
  std::vector<PeerEndpoint> endpoints;  // one per QP
};

struct ConnectedReply {};

struct StartedReply {
  std::int64_t at_ns = 0;    // when the work started (wall clock, Unix ns)
  std::int64_t late_ns = 0;  // how far after the requested time it started (0 if on time)
};

struct StatsEvent {
  double t_s = 0;              // seconds since started
  std::uint64_t messages = 0;  // completed so far (bw client: messages; server: receives;
                               // lat: ping-pongs)
  std::uint64_t bytes = 0;
  double gbps = 0;  // over the last period
};

struct QpResult {
  std::uint32_t qpn = 0;
  std::uint16_t udp_sport = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  double gbps = 0;
  traffic::QpCounters counters;
  // CRC-32 of the QP's source half (what it sends; READ results land there) and target half
  // (what the peer writes or sends into) of its buffer once the run has ended (GPU memory is
  // read back through the host). Data is intact when the client's source equals the server's
  // target.
  std::optional<std::uint32_t> source_crc32, target_crc32;
  // The IP TOS byte the QP was created with (setup's traffic_class_of_qp).
  std::optional<std::uint8_t> traffic_class{};
  // A bw sender's QP (engine rocehil): its longest wait for a completion with work outstanding,
  // from stall_from_us after the sender's start (traffic::StallWatch). Absent before its first
  // completion and from other workloads.
  std::optional<std::uint64_t> stall_us{}, stall_from_us{};
};

struct LatencySummary {
  std::uint64_t samples = 0;
  double min_us = 0, mean_us = 0, p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  struct Bucket {
    double upper_us = 0;
    std::uint64_t count = 0;
  };
  std::vector<Bucket> histogram;  // non-empty buckets, ascending
};

// What one rank of a collective did (traffic::CollectiveResult, for the wire).
struct CollectiveReport {
  std::uint64_t iterations = 0;
  std::int64_t start_ns = 0;
  std::vector<std::int64_t> iteration_end_ns{};
  // Per step, when the rank has at most max_steps_reported steps or the pattern is pairwise
  // (its matrix times each pair's step); empty otherwise. A ring's rank has 2 x (ranks - 1)
  // steps: at thousands of ranks, every rank's lists made the controller hold and parse a number
  // per step per rank, which grows with the square of the ranks.
  std::vector<std::uint64_t> wait_ns{};
  std::vector<std::uint64_t> step_ns{};
  // Always: the waits' sum and the step that waited longest.
  std::uint64_t wait_total_ns = 0;
  std::uint64_t longest_wait_step = 0;
  std::uint64_t longest_wait_ns = 0;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  // CRC-32 of the rank's output after the first run since setup (the verified iteration), when
  // it ran to its end without errors in host memory.
  std::optional<std::uint32_t> output_crc32{};
};

// Sets wait_total_ns and longest_wait_* from the per-step waits (the sum saturates), then
// empties wait_ns and step_ns when they hold more than max_steps_reported steps, unless
// `keep_each_step` (pairwise, whose matrix needs each step's time).
void fold_step_waits(CollectiveReport& report, bool keep_each_step);

// How a paced bw sender held its rate (SetupRequest::rate_bps).
struct PacingReport {
  std::string method = "engine";  // nic | engine (traffic::PacingMethod's names)
  double asked_bps = 0;           // the sender's rate in all
  // nic: what each QP was limited to (asked_bps / qps), as the NIC took it in kbps.
  double per_qp_bps = 0;
  // engine on verbs: why the NIC's limiter was not used (the device has no packet pacing, the
  // rate is outside its range, the call failed); empty when it was not asked (soft).
  std::string nic_refused{};
  // engine: the measured seconds its token bucket held back a sender whose queues had room
  // (traffic::BwResult::pacer_held_ns); absent for the NIC's limiter, which does not say.
  std::optional<double> held_s{};
  // engine: the measured seconds' worth of rate its bucket lost, full, while the sender was away
  // (traffic::BwResult::pacer_lost_ns); absent for the NIC's limiter.
  std::optional<double> lost_s{};
  // engine: the seconds of rate its bucket's burst held at the end (5 ms, or wider for a host
  // that woke the sender late: traffic::burst_for_gap); absent for the NIC's limiter.
  std::optional<double> burst_s{};
};

// What a sender had delivered over time: its completed bytes (warm-up included, cumulative),
// sampled by the agent every period_us while its work ran, each sample stamped with when it was
// taken. The timeline a failover is read from: a flow that moved nothing for a while, and how
// soon it came back after a link went down.
struct ProgressTimeline {
  std::int64_t start_ns = 0;           // wall clock of t_us 0: the work's agreed start
  std::uint32_t period_us = 10'000;    // asked; doubled (pairs of samples merged) when long
  std::vector<std::uint64_t> t_us{};   // since start_ns, ascending
  std::vector<std::uint64_t> bytes{};  // completed then, never decreasing
};
inline constexpr std::size_t max_timeline_samples = 8192;

struct ResultsEvent {
  Workload workload = Workload::bw;
  Role role = Role::client;
  bool stopped = false;        // ended by a stop request or stdin closing rather than by finishing
  double seconds = 0;          // measured interval
  std::uint64_t messages = 0;  // bw: messages sent (client) or received (server)
  std::uint64_t bytes = 0;
  double gbps = 0;
  double messages_per_s = 0;
  std::uint64_t errors = 0;
  std::string first_error;
  // The status of the failed completion first_error describes, when it was one: what the
  // controller grades by (traffic::caused_by_fabric). Absent for an error that was no completion
  // and from agents older than the field.
  std::optional<traffic::WcStatus> first_error_status{};
  std::vector<QpResult> per_qp;
  // bw, lat in GPU memory: how the NIC registered it, "dma-buf" or "peer memory"; absent for
  // host memory.
  std::optional<std::string> gpu_registration;
  std::optional<LatencySummary> latency;       // lat only
  std::optional<CollectiveReport> collective;  // collective only
  // What the NIC the traffic used counted from just before the start to the end of the work
  // (traffic::NicCounterDelta, keys "hw_counters/np_cnp_sent", ...): at most max_agent_nics,
  // each at most max_nic_counters counters.
  std::vector<traffic::NicCounterDelta> nics;
  // What the device raised on its own while the work ran (verbs: ibv_get_async_event; soft: its
  // netdev's carrier), oldest first, at most traffic::max_device_events.
  std::vector<traffic::DeviceEvent> events;
  // What bent the agent's own timing while the work ran: how late a thread sleeping 1 ms woke,
  // how long its threads waited for a CPU, the host's steal, PSI and run queue. Its latency and
  // rate are the scheduler's as much as the fabric's when these are large.
  std::optional<SchedulingReport> cpu;
  // bw, a paced sender only: how its rate was held.
  std::optional<PacingReport> pacing{};
  // bw senders: the bytes they had delivered over time; collective ranks: the bytes they had
  // received.
  std::optional<ProgressTimeline> timeline{};
};
inline constexpr std::size_t max_agent_nics = 16;
inline constexpr std::size_t max_nic_counters = 8192;

struct ErrorReply {
  std::string message;
};

struct CaptureStartedReply {
  std::string iface;
  std::string description;
  std::uint64_t speed_bps = 0;
};

struct CaptureSummaryEvent {
  bool stopped = false;  // ended by capture_stop or stdin closing rather than by its seconds
  std::string backend, iface, filter;
  std::uint32_t snaplen = 0;
  std::uint64_t start_ns = 0, end_ns = 0;  // wall clock, Unix ns
  std::uint64_t frames = 0;
  std::uint64_t dropped_buffer = 0, dropped_interface = 0;
  std::uint64_t lost_upstream = 0;  // a remote mirror's frames lost before the collector
  double coverage = 1;              // frames / (frames + drops + lost_upstream)
  std::vector<std::string> files;
  std::uint64_t files_deleted = 0;
  std::string write_error;
  // The analysis as `rocehil analyze --json` prints it: one JSON object (schema_version 1),
  // kept as text; its consumer reads it with the analysis schema.
  std::string analysis_json;
};

struct PerftestListeningReply {
  std::uint16_t tcp_port = 0;
};

// One side's perftest run, ended: what it ran, what it printed, and the numbers read from that.
struct PerftestResultsEvent {
  Role role = Role::client;
  std::string tool;
  bool stopped = false;              // ended by a stop request or stdin closing
  std::vector<std::string> command;  // the words it ran, program first
  std::string version;               // perftest's --version ("6.06"); empty when it would not say
  int exit_code = 0;                 // -N: signal N ended it
  double seconds = 0;                // from start to exit
  std::optional<perftest::Report> report;  // absent when nothing could be read
  // Why the run failed, in perftest's own words when it gave any ("Did not detect devices"), else
  // the agent's ("ib_write_bw is not installed", "ran past its 70 s timeout", the parser's reason).
  std::string error;
  std::string output;  // the last 4 KiB of its stdout, then stderr
  // The NIC's counters from just before perftest started to its exit, as for results.
  std::vector<traffic::NicCounterDelta> nics;
};
inline constexpr std::size_t max_perftest_output_bytes = 4096;

struct Iperf3ListeningReply {
  std::uint16_t port = 0;
};

// One side's iperf3 run, ended: what it ran, what it printed, and the numbers read from that.
struct Iperf3ResultsEvent {
  Role role = Role::client;
  bool stopped = false;                 // ended by a stop request or stdin closing
  std::vector<std::string> command;     // the words it ran, program first
  int exit_code = 0;                    // -N: signal N ended it
  double seconds = 0;                   // from start to exit
  std::optional<iperf::Report> report;  // absent when its output could not be read
  // Why the run failed: iperf3's own words (its JSON's error member: iperf3 3.12 exits 0 after
  // one), else the agent's ("iperf3 is not installed", "ran past its 62 s timeout").
  std::string error;
  std::string output;  // the last 4 KiB of its stdout, then stderr
};

// One change made (apply) or undone (restore): a journal entry.
struct SettingChange {
  std::string name;
  std::string netdev;
  std::string where;   // the file or tool written through
  std::string before;  // in force before the change
  std::string wanted;  // written by the change
  bool operator==(const SettingChange&) const = default;
};

// A journal a restore left alone: the run holding it is alive, or ran on a machine the host
// cannot judge it on.
struct SettingsInUse {
  std::string run;    // the journal's run
  std::string since;  // when it began
  settings::JournalOwner owner;
  bool alive = false;  // false: the owner ran elsewhere; its controller's machine can tell
  bool operator==(const SettingsInUse&) const = default;
};

struct SettingsReply {
  SettingsAction action = SettingsAction::read;
  std::vector<SettingChange> changes;  // apply: made, in order; restore: put back, newest first
  bool journal_found = false;          // restore: a journal was there
  std::string journal_run;             // restore: the run that had left it
  std::vector<SettingsInUse> in_use;   // restore: journals left alone (not put back)
  // The values in force after the action, read back from the NIC: apply's and read's names on
  // every NIC (a name a NIC does not have is missing here, never given a value).
  std::vector<SettingValue> values;
};

// The session's traffic and capture have stopped and what it held is released.
struct EndedReply {};

using ReplyBody = std::variant<HelloReply, SetupReply, ConnectedReply, StartedReply, StatsEvent,
                               ResultsEvent, ErrorReply, CaptureStartedReply, CaptureSummaryEvent,
                               PerftestListeningReply, PerftestResultsEvent, SettingsReply,
                               EndedReply, Iperf3ListeningReply, Iperf3ResultsEvent>;

struct Reply {
  std::optional<std::uint64_t> id;
  ReplyBody body;
  SessionId session = 0;
};

struct ParsedReply {
  std::optional<Reply> reply;
  std::string error;  // empty when `reply` is set
};

std::string to_json_line(const Reply& reply);  // one line, no newline
// The controller's side: as strict as parse_request (an agent of another version is caught here).
ParsedReply parse_reply(std::string_view line);

}  // namespace rocehil::agent
