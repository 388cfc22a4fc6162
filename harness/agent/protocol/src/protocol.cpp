// The agent protocol: each message described once (fields.hpp), and reading and writing driven
// from the descriptions. What a field must be, and the message when it is not, is said where the
// field is described; rules across fields are in each message's check().
#include "rocehil/agent/protocol.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <span>
#include <tuple>
#include <utility>

#include "fields.hpp"
#include "json_reader.hpp"
#include "rocehil/agent/qp_counters_json.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/scheduling.hpp"
#include "rocehil/iperf/command.hpp"
#include "rocehil/perftest/command.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::agent {

namespace wire {

namespace {

constexpr std::uint64_t max_qpn = 0xFFFFFF;  // QPNs and PSNs are 24 bits on the wire
constexpr std::uint64_t max_u64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t max_u32 = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t max_u16 = std::numeric_limits<std::uint16_t>::max();
constexpr std::uint64_t max_u8 = std::numeric_limits<std::uint8_t>::max();
constexpr std::uint64_t max_i64 = std::numeric_limits<std::int64_t>::max();
// Every QP registers a buffer of message_bytes; beyond this the agent would pin most of a host.
constexpr std::uint64_t max_setup_buffer_bytes = std::uint64_t{4} << 30;
constexpr std::size_t max_address_chars = 45;  // INET6_ADDRSTRLEN - 1: IPv4-mapped IPv6, longest
constexpr std::size_t max_device_chars = 64;
constexpr std::size_t gid_hex_digits = 32;
constexpr std::string_view version_fix =
    "run the same rocehil version on the controller and the hosts";

// The op names, in the order of the alternatives of RequestBody and ReplyBody: an op's index is
// its variant index, so parsing and writing share one table.
constexpr std::string_view request_ops[] = {"hello",    "setup",         "connect",      "start",
                                            "stop",     "capture_start", "capture_stop", "perftest",
                                            "settings", "end",           "admission",    "iperf3"};
constexpr std::string_view reply_ops[] = {"hello",
                                          "setup",
                                          "connected",
                                          "started",
                                          "stats",
                                          "results",
                                          "error",
                                          "capture_started",
                                          "capture_summary",
                                          "perftest_listening",
                                          "perftest_results",
                                          "settings",
                                          "ended",
                                          "iperf3_listening",
                                          "iperf3_results"};
static_assert(std::size(request_ops) == std::variant_size_v<RequestBody>);
static_assert(std::size(reply_ops) == std::variant_size_v<ReplyBody>);

constexpr std::string_view strategy_names[] = {"split", "round_robin"};
constexpr std::uint32_t max_collective_ranks = 65536;
// Per-iteration and per-step lists in a results line: bounded so the line stays under 1 MiB.
constexpr std::size_t max_collective_entries = 40000;
constexpr std::string_view direction_names[] = {"unknown", "leaf-to-spine", "spine-to-leaf"};
constexpr std::size_t max_spine_macs = 256;
constexpr std::string_view capture_backend_names[] = {"pcap", "dpdk"};
constexpr std::string_view capture_filter_names[] = {"all", "roce", "cnp-pfc"};
constexpr std::size_t max_dpdk_args_chars = 2048;
constexpr std::size_t max_path_chars = 4096;
constexpr std::string_view counter_fields[] = {"packets_sent",
                                               "bytes_sent",
                                               "packets_received",
                                               "bytes_received",
                                               "retransmitted_packets",
                                               "timeouts",
                                               "naks_sent",
                                               "naks_received",
                                               "cnps_sent",
                                               "cnps_handled",
                                               "ce_received",
                                               "out_of_sequence",
                                               "rate_cuts",
                                               "rate_gbps"};

constexpr std::string_view provider_names[] = {"soft", "verbs"};
// traffic::to_string(RegionKind) of the two GPU kinds.
constexpr std::string_view gpu_registration_names[] = {"dma-buf", "peer memory"};
constexpr std::string_view workload_names[] = {"bw", "lat", "collective"};  // Workload's order
constexpr std::string_view role_names[] = {"client", "server"};             // Role's order
// traffic::to_string(WcStatus) of each status but success, in WcStatus's order from 1.
constexpr std::string_view wc_failure_names[] = {"local_length_error",  "local_protection_error",
                                                 "remote_access_error", "remote_invalid_request",
                                                 "retry_exceeded",      "flushed",
                                                 "rnr_retry_exceeded"};
// A failure's status read as its index in wc_failure_names, and written back.
struct WcFailure {
  traffic::WcStatus read(const Value& v, bool) const {
    return static_cast<traffic::WcStatus>(v.choice(wc_failure_names) + 1);
  }
  ordered write(traffic::WcStatus s) const {
    return std::string(wc_failure_names[static_cast<std::size_t>(s) - 1]);
  }
};
constexpr std::string_view opcode_names[] = {"send", "write", "write_with_imm", "read"};
constexpr std::string_view transport_names[] = {"rc", "ud"};  // in traffic::QpType order
constexpr std::string_view perftest_tool_names[] = {"write_bw",  "read_bw",  "send_bw",
                                                    "write_lat", "read_lat", "send_lat"};
constexpr std::string_view engine_names[] = {"rocehil", "perftest", "iperf3"};
constexpr std::string_view iperf3_protocol_names[] = {"tcp", "udp"};
constexpr std::string_view settings_action_names[] = {"apply", "restore", "read",
                                                      "check"};  // enum order
constexpr std::size_t max_settings_addresses = 16;
constexpr std::size_t max_settings_values = 256;
constexpr traffic::Opcode opcode_values[] = {traffic::Opcode::send, traffic::Opcode::write,
                                             traffic::Opcode::write_with_imm,
                                             traffic::Opcode::read};

// ---- values with a format of their own ----

// ASCII only, whatever the locale: these guard names that end up in paths and command lines.
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// An IP literal as inet_pton takes it: the address is handed to the provider and, on the
// controller, into command lines, so anything but a plain literal ("h1;touch /tmp/x") is refused.
std::string ip_address(const Value& v) {
  const std::string& s = v.string();
  bool ok = !s.empty() && s.size() <= max_address_chars && s.find('\0') == std::string::npos;
  if (ok) {
    unsigned char buffer[sizeof(in6_addr)];
    ok = inet_pton(AF_INET, s.c_str(), buffer) == 1 || inet_pton(AF_INET6, s.c_str(), buffer) == 1;
  }
  if (!ok) v.fail("must be an IPv4 or IPv6 address such as 192.0.2.1 or 2001:db8::1");
  return s;
}

// An RDMA device name: the agent puts it in sysfs paths, so only the characters names use.
std::string device_name(const Value& v) {
  const std::string& s = v.string();
  bool ok = s.size() <= max_device_chars;
  for (char c : s) {
    ok = ok && (is_ascii_alnum(c) || c == '_' || c == '.' || c == ':' || c == '-');
  }
  if (!ok)
    v.fail(fmt::format(
        "must be an RDMA device name such as mlx5_0: up to {} letters, digits, '_', '.', ':' or "
        "'-'",
        max_device_chars));
  return s;
}

std::string gid(const Value& v) {
  const std::string& s = v.string();
  bool ok = s.empty() || s.size() == gid_hex_digits;
  for (char c : s) ok = ok && (is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
  if (!ok) v.fail("must be empty or 32 hex digits");
  return s;
}

std::uint32_t mtu(const Value& v) {
  constexpr std::string_view requirement = "must be 256, 512, 1024, 2048 or 4096";
  const auto m = v.integer<std::uint32_t>(256, 4096, requirement);
  if ((m & (m - 1)) != 0) v.fail(requirement);
  return m;
}

// An interface or DPDK port name ("eth3", "net_af_packet0", "0000:3b:00.1"): it reaches sysfs
// paths and the capture library, so only the characters such names use.
std::string interface_name(const Value& v) {
  const std::string& s = v.string();
  bool ok = !s.empty() && s.size() <= max_device_chars;
  for (char c : s) ok = ok && (is_ascii_alnum(c) || c == '_' || c == '.' || c == ':' || c == '-');
  if (!ok)
    v.fail(
        fmt::format("must be an interface or port name such as eth3 or 0000:3b:00.1: up to "
                    "{} letters, digits, '_', '.', ':' or '-'",
                    max_device_chars));
  return s;
}

// Free text bound for one argument list or path: printable ASCII on one line, no shell involved.
std::string printable(const Value& v, std::size_t max_chars, bool allow_empty) {
  const std::string& s = v.string();
  bool ok = s.size() <= max_chars && (allow_empty || !s.empty());
  for (char c : s) ok = ok && c >= 0x20 && c < 0x7f;
  if (!ok)
    v.fail(fmt::format("must be {}printable ASCII on one line, at most {} characters",
                       allow_empty ? "" : "non-empty ", max_chars));
  return s;
}

// A MAC address as "aa:bb:cc:dd:ee:ff" (either case, ':' or '-'), returned in lower case with ':'.
std::string mac_address(const Value& v) {
  const std::string& s = v.string();
  bool ok = s.size() == 17;
  std::string out;
  for (std::size_t i = 0; ok && i < s.size(); ++i) {
    const char c = s[i];
    if (i % 3 == 2) {
      ok = c == ':' || c == '-';
      out += ':';
    } else {
      ok = is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      out += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
    }
  }
  if (!ok) v.fail("must be a MAC address such as 0c:42:a1:00:00:01");
  return out;
}

// Free text as a field's rule.
struct Printable {
  std::size_t max_chars;
  bool allow_empty;
  std::string read(const Value& v, bool) const { return printable(v, max_chars, allow_empty); }
  ordered write(const std::string& x) const { return x; }
};

traffic::Opcode read_opcode(const Value& v) {
  return opcode_values[v.choice(opcode_names)];
}
ordered write_opcode(const traffic::Opcode& o) {
  return std::string(traffic::to_string(o));
}

std::uint32_t stats_ms(const Value& v) {
  constexpr std::string_view requirement = "must be 0 (no stats) or an integer from 10 to 3600000";
  const auto ms = v.integer<std::uint32_t>(0, 3'600'000, requirement);
  if (ms != 0 && ms < 10) v.fail(requirement);
  return ms;
}

// The traffic library's pattern names, as the choice readers want them.
std::span<const std::string_view> pattern_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto p : traffic::all_patterns()) v.push_back(traffic::to_string(p));
    return v;
  }();
  return names;
}

// A counter the agent's provider did not measure is absent from the object, and stays marked
// unmeasured here: it must not turn into a 0.
traffic::QpCounters read_counters(const Value& v) {
  const Object o = v.object(false);
  o.only(counter_fields);
  traffic::QpCounters c;
  c.measured = 0;
  std::uint64_t* const integers[] = {&c.packets_sent,
                                     &c.bytes_sent,
                                     &c.packets_received,
                                     &c.bytes_received,
                                     &c.retransmitted_packets,
                                     &c.timeouts,
                                     &c.naks_sent,
                                     &c.naks_received,
                                     &c.cnps_sent,
                                     &c.cnps_handled,
                                     &c.ce_received,
                                     &c.out_of_sequence,
                                     &c.rate_cuts};
  static_assert(sizeof integers / sizeof integers[0] == traffic::qp_counter_kinds - 1);
  for (int i = 0; i < traffic::qp_counter_kinds; ++i) {
    const auto counter = static_cast<traffic::QpCounter>(i);
    const auto field = o.optional(traffic::to_string(counter));
    if (!field) continue;
    if (counter == traffic::QpCounter::rate_gbps)
      c.rate_gbps = field->finite();
    else
      *integers[i] = field->integer<std::uint64_t>(0, max_u64);
    c.measured |= traffic::QpCounters::bit(counter);
  }
  return c;
}

ordered write_counters(const traffic::QpCounters& c) {
  return qp_counters_json(c);
}

std::vector<LatencySummary::Bucket> read_histogram(const Value& histogram) {
  const std::size_t n = histogram.array();
  std::vector<LatencySummary::Bucket> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Value bucket = histogram.at(i);
    if (!bucket.raw().is_array() || bucket.raw().size() != 2)
      bucket.fail("must be a pair [upper_us, count]");
    out.push_back({bucket.at(0).finite(), bucket.at(1).integer<std::uint64_t>(0, max_u64)});
  }
  return out;
}
ordered write_histogram(const std::vector<LatencySummary::Bucket>& buckets) {
  ordered out = ordered::array();
  for (const auto& b : buckets) out.push_back(ordered::array({b.upper_us, b.count}));
  return out;
}

// A NIC's counter deltas: "SOURCE/NAME" to a count, at most max_nic_counters of them.
std::map<std::string, std::uint64_t> read_deltas(const Value& deltas) {
  if (!deltas.raw().is_object()) deltas.fail("must be an object of counter deltas");
  if (deltas.raw().size() > max_nic_counters)
    deltas.fail(fmt::format("must have at most {} counters", max_nic_counters));
  std::map<std::string, std::uint64_t> out;
  for (const auto& [key, value] : deltas.raw().items()) {
    const json key_text = key;  // Value keeps a reference: the json must outlive it
    const Value name(key_text, "results", deltas.label() + " key");
    const std::string counter = printable(name, 128, false);
    if (counter.find('/') == std::string::npos)
      name.fail("must be SOURCE/NAME (hw_counters/np_cnp_sent)");
    out[counter] = Value(value, "results", fmt::format("{}.{}", deltas.label(), counter))
                       .integer<std::uint64_t>(0, max_u64);
  }
  return out;
}

// The capture's analysis travels as the analyzer wrote it; only its schema is checked here.
std::string read_analysis(const Value& analysis) {
  const Object a = analysis.object(false);
  const Value version = a.need("schema_version");
  if (version.integer<int>(0, 1000) != 1)
    version.fail("must be 1 (the analysis schema this controller reads)");
  return analysis.raw().dump(-1, ' ', false, json::error_handler_t::replace);
}
// Text that is not one JSON object (a bug on our side) is sent as an empty analysis, which the
// controller refuses by its missing schema_version rather than by a parse error mid-line.
ordered write_analysis(const std::string& text) {
  ordered analysis = ordered::parse(text, nullptr, false);
  return analysis.is_object() ? std::move(analysis) : ordered::object();
}

}  // namespace

// ---- the messages, each described once ----

template <auto M>
constexpr Member<M> at{};

// A collective's plan for one rank. `rank` and `ranks_per_host` are checked against `ranks`.
template <>
struct Describe<CollectiveSetup> {
  using S = CollectiveSetup;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("pattern", at<&S::pattern>, Choice{pattern_names()}, Presence::required),
                   field("ranks", at<&S::ranks>, Int<std::uint32_t>{2, max_collective_ranks},
                         Presence::required),
                   field("rank", at<&S::rank>, Int<std::uint32_t>{0, max_u32}, Presence::checked),
                   field("ranks_per_host", at<&S::ranks_per_host>, Int<std::uint32_t>{1, max_u32},
                         Presence::checked),
                   field("pipeline", at<&S::pipeline>, Int<std::uint32_t>{1, 1024}),
                   field("seed", at<&S::seed>, Int<std::uint64_t>{0, max_u64}),
                   field("strategy", at<&S::strategy>, Choice{strategy_names}),
                   field("sport_seed", at<&S::sport_seed>, Int<std::uint64_t>{0, max_u64})};
    return f;
  }
  static void check(const Object& o, S& c) {
    c.rank = o.need("rank").integer<std::uint32_t>(0, c.ranks - 1);
    if (auto r = o.get("ranks_per_host")) {
      c.ranks_per_host = r->integer<std::uint32_t>(1, c.ranks);
      if (c.ranks % c.ranks_per_host != 0) r->fail(fmt::format("must divide ranks ({})", c.ranks));
    }
  }
};

template <>
struct Describe<SetupRequest> {
  using S = SetupRequest;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("provider", at<&S::provider>, Choice{provider_names}),
        field("device", at<&S::device>, Custom<std::string>{device_name}),
        field("port", at<&S::port>, Int<std::uint8_t>{1, 255}),
        field("gid_index", at<&S::gid_index>, Int<int>{-1, 255}),
        field("address", at<&S::address>, Custom<std::string>{ip_address}, Presence::required),
        field("workload", at<&S::workload>, EnumChoice<Workload>{workload_names}),
        field("role", at<&S::role>, EnumChoice<Role>{role_names}),
        // A collective always writes with immediate, and says so by not naming an opcode.
        field_when("opcode", at<&S::opcode>, Custom<traffic::Opcode>{read_opcode, write_opcode},
                   [](const S& s) { return s.workload != Workload::collective; }),
        field("qps", at<&S::qps>, Int<std::uint32_t>{1, max_agent_qps}),
        field("message_bytes", at<&S::message_bytes>,
              Int<std::uint32_t>{1, std::uint64_t{1} << 30}),
        field("tx_depth", at<&S::tx_depth>, Int<std::uint32_t>{1, 4096}),
        field("mtu", at<&S::mtu>, Custom<std::uint32_t>{mtu}),
        field("traffic_class", at<&S::traffic_class>, Int<std::uint8_t>{0, 255}),
        field_when(
            "traffic_classes", at<&S::traffic_classes>, List<Int<std::uint8_t>>{{0, 255}},
            [](const S& s) { return !s.traffic_classes.empty(); }, Presence::checked),
        field("sl", at<&S::sl>, Int<std::uint8_t>{0, 7}),
        field("udp_sports", at<&S::udp_sports>, List<Int<std::uint16_t>>{{1, max_u16}},
              Presence::checked),
        field("bidirectional", at<&S::bidirectional>, Bool{}),
        field("transport", at<&S::transport>, EnumChoice<traffic::QpType>{transport_names}),
        field("gpu", at<&S::gpu>, Int<int>{-1, 255}),
        field("retry_count", at<&S::retry_count>, Int<std::uint8_t>{0, 7}),
        field("ack_timeout_us", at<&S::ack_timeout_us>, Int<std::uint32_t>{1, 60'000'000}),
        field("link_gbps", at<&S::link_gbps>, Number{0, false, 10000}),
        field_when(
            "rate_bps", at<&S::rate_bps>, Number{0, true, max_rate_bps},
            [](const S& s) { return s.rate_bps > 0; }, Presence::extra),
        field("collective", at<&S::collective>, Nested<CollectiveSetup>{Strictness::lenient})};
    return f;
  }
  static void check(const Object& o, S& s);
};

template <>
struct Describe<PeerEndpoint> {
  using S = PeerEndpoint;
  using E = traffic::Endpoint;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("address", MemberOf<&S::endpoint, &E::address>{}, Custom<std::string>{ip_address},
              Presence::required),
        field("gid", MemberOf<&S::endpoint, &E::gid>{}, Custom<std::string>{gid}),
        field("qpn", MemberOf<&S::endpoint, &E::qpn>{}, Int<std::uint32_t>{1, max_qpn},
              Presence::required),
        field("psn", MemberOf<&S::endpoint, &E::psn>{}, Int<std::uint32_t>{0, max_qpn}),
        field("udp_sport", MemberOf<&S::endpoint, &E::udp_sport>{}, Int<std::uint16_t>{0, max_u16}),
        field("mtu", MemberOf<&S::endpoint, &E::mtu>{}, Custom<std::uint32_t>{mtu}),
        field("max_reads", MemberOf<&S::endpoint, &E::max_reads>{}, Int<std::uint8_t>{0, max_u8}),
        field("remote_address", at<&S::remote_address>, Int<std::uint64_t>{0, max_u64}),
        field("rkey", at<&S::rkey>, Int<std::uint32_t>{0, max_u32})};
    return f;
  }
};

// One per QP, in QP order; strict in a reply (setup's endpoints), not in connect's peers.
constexpr List<Nested<PeerEndpoint>> peer_list{
    {Strictness::inherit}, 1, max_agent_qps, " (one per QP)"};

template <>
struct Describe<ConnectRequest> {
  static const auto& fields() {
    static const auto f =
        std::tuple{field("peers", at<&ConnectRequest::peers>, peer_list, Presence::required)};
    return f;
  }
};

template <>
struct Describe<StartRequest> {
  using S = StartRequest;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("at_ns", at<&S::at_ns>, Int<std::int64_t>{0, max_i64}),
        field("seconds", at<&S::seconds>, Number{0, /*above_lo=*/true, 86400}),
        field("iterations", at<&S::iterations>, Int<std::uint64_t>{0, 1'000'000'000'000}),
        field("warmup_seconds", at<&S::warmup_seconds>, Number{0, false, 3600}),
        field("warmup_iterations", at<&S::warmup_iterations>, Int<std::uint64_t>{0, 1'000'000'000}),
        field("stats_ms", at<&S::stats_ms>, Custom<std::uint32_t>{stats_ms}),
        field("messages_per_qp", at<&S::messages_per_qp>,
              Int<std::uint64_t>{0, 1'000'000'000'000})};
    return f;
  }
};

template <>
struct Describe<CaptureStartRequest> {
  using S = CaptureStartRequest;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("backend", at<&S::backend>, Choice{capture_backend_names}),
                   field("iface", at<&S::iface>, Custom<std::string>{interface_name}),
                   field("dpdk_args", at<&S::dpdk_args>, Printable{max_dpdk_args_chars, true}),
                   field("filter", at<&S::filter>, Choice{capture_filter_names}),
                   field("snaplen", at<&S::snaplen>, Int<std::uint32_t>{64, 262144}),
                   field("write", at<&S::write>, Printable{max_path_chars, true}),
                   field("seconds", at<&S::seconds>, Number{0, false, 86400}),
                   field("ring_files", at<&S::ring_files>, Int<std::uint32_t>{0, 100000}),
                   field("ring_mb", at<&S::ring_mb>, Int<std::uint32_t>{0, 1u << 20}),
                   field("buffer_mb", at<&S::buffer_mb>, Int<std::uint32_t>{1, 1024}),
                   field("link_gbps", at<&S::link_gbps>, Number{0, false, 10000}),
                   field("max_flows", at<&S::max_flows>, Int<std::uint32_t>{0, 100000}),
                   field("storm_ms", at<&S::storm_ms>, Number{0, /*above_lo=*/true, 3'600'000}),
                   field("direction", at<&S::direction>, Choice{direction_names}),
                   field("spine_macs", at<&S::spine_macs>,
                         List<Custom<std::string>>{{mac_address}, 0, max_spine_macs}),
                   field("remote_session", at<&S::remote_session>, Int<std::uint32_t>{0, max_u32},
                         Presence::extra),
                   field("remote_source", at<&S::remote_source>, Custom<std::string>{ip_address},
                         Presence::extra)};
    return f;
  }
  static void check(const Object& o, S& c);
};

template <class Empty>
struct NoFields {
  static const auto& fields() {
    static const std::tuple<> f;
    return f;
  }
};
template <>
struct Describe<HelloRequest> : NoFields<HelloRequest> {};
template <>
struct Describe<StopRequest> : NoFields<StopRequest> {};
template <>
struct Describe<CaptureStopRequest> : NoFields<CaptureStopRequest> {};
template <>
struct Describe<EndRequest> : NoFields<EndRequest> {};
template <>
struct Describe<AdmissionRequest> {
  using S = AdmissionRequest;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("admitted", at<&S::admitted>, Bool{}, Presence::required),
                   field("host", at<&S::host>, Printable{256, true}),
                   field("why", at<&S::why>, Printable{2048, true})};
    return f;
  }
};
template <>
struct Describe<EndedReply> : NoFields<EndedReply> {};
template <>
struct Describe<ConnectedReply> : NoFields<ConnectedReply> {};

// ---- replies ----

constexpr List<Text> texts{};

template <>
struct Describe<DeviceEntry> {
  using S = DeviceEntry;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("name", at<&S::name>, Text{}), field("provider", at<&S::provider>, Text{}),
                   field("addresses", at<&S::addresses>, texts, Presence::required),
                   field("detail", at<&S::detail>, Text{})};
    return f;
  }
};

template <>
struct Describe<HelloReply> {
  using S = HelloReply;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("version", at<&S::version>, Text{}),
        field("protocol", at<&S::protocol>, Int<int>{0, INT_MAX}),
        field("host", at<&S::host>, Text{}),
        field("providers", at<&S::providers>, texts, Presence::required),
        field("workloads", at<&S::workloads>, texts, Presence::required),
        field("devices", at<&S::devices>, List<Nested<DeviceEntry>>{{Strictness::strict}},
              Presence::required),
        field("capture_backends", at<&S::capture_backends>,
              List<Choice>{{capture_backend_names}, 0, std::size(capture_backend_names)}),
        field("engines", at<&S::engines>,
              List<Choice>{{engine_names}, 1, std::size(engine_names)})};
    return f;
  }
};

template <>
struct Describe<SetupReply> {
  static const auto& fields() {
    static const auto f =
        std::tuple{field("endpoints", at<&SetupReply::endpoints>, peer_list, Presence::required)};
    return f;
  }
};

template <>
struct Describe<StartedReply> {
  using S = StartedReply;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("at_ns", at<&S::at_ns>, Int<std::int64_t>{0, max_i64}),
                   field("late_ns", at<&S::late_ns>, Int<std::int64_t>{0, max_i64})};
    return f;
  }
};

template <>
struct Describe<StatsEvent> {
  using S = StatsEvent;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("t_s", at<&S::t_s>, Finite{}),
                   field("messages", at<&S::messages>, Int<std::uint64_t>{0, max_u64}),
                   field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
                   field("gbps", at<&S::gbps>, Finite{})};
    return f;
  }
};

template <>
struct Describe<QpResult> {
  using S = QpResult;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("qpn", at<&S::qpn>, Int<std::uint32_t>{0, max_qpn}),
        field("udp_sport", at<&S::udp_sport>, Int<std::uint16_t>{0, max_u16}),
        field("messages", at<&S::messages>, Int<std::uint64_t>{0, max_u64}),
        field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
        field("gbps", at<&S::gbps>, Finite{}),
        field("counters", at<&S::counters>,
              Custom<traffic::QpCounters>{read_counters, write_counters}, Presence::required),
        // Present once the run has ended on a buffer in host memory.
        field("source_crc32", at<&S::source_crc32>, Int<std::uint32_t>{0, max_u32},
              Presence::extra),
        field("target_crc32", at<&S::target_crc32>, Int<std::uint32_t>{0, max_u32},
              Presence::extra),
        field("traffic_class", at<&S::traffic_class>, Int<std::uint8_t>{0, 255}, Presence::extra),
        field("stall_us", at<&S::stall_us>, Int<std::uint64_t>{0, max_u64}, Presence::extra),
        field("stall_from_us", at<&S::stall_from_us>, Int<std::uint64_t>{0, max_u64},
              Presence::extra)};
    return f;
  }
};

template <>
struct Describe<LatencySummary> {
  using S = LatencySummary;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("samples", at<&S::samples>, Int<std::uint64_t>{0, max_u64}),
        field("min_us", at<&S::min_us>, Finite{}),
        field("mean_us", at<&S::mean_us>, Finite{}),
        field("p50_us", at<&S::p50_us>, Finite{}),
        field("p99_us", at<&S::p99_us>, Finite{}),
        field("p999_us", at<&S::p999_us>, Finite{}),
        field("max_us", at<&S::max_us>, Finite{}),
        field("histogram", at<&S::histogram>,
              Custom<std::vector<LatencySummary::Bucket>>{read_histogram, write_histogram},
              Presence::required)};
    return f;
  }
};

// Per-iteration and per-step lists, bounded so a results line stays under 1 MiB.
template <class T>
constexpr List<Int<T>> entries{{0, std::numeric_limits<T>::max()}, 0, max_collective_entries};

template <>
struct Describe<CollectiveReport> {
  using S = CollectiveReport;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("iterations", at<&S::iterations>, Int<std::uint64_t>{0, max_u64}, Presence::required),
        field("start_ns", at<&S::start_ns>, Int<std::int64_t>{0, max_i64}, Presence::required),
        field("iteration_end_ns", at<&S::iteration_end_ns>, entries<std::int64_t>,
              Presence::required),
        field("wait_ns", at<&S::wait_ns>, entries<std::uint64_t>, Presence::required),
        field("step_ns", at<&S::step_ns>, entries<std::uint64_t>, Presence::required),
        field("wait_total_ns", at<&S::wait_total_ns>, Int<std::uint64_t>{0, max_u64},
              Presence::required),
        field("longest_wait_step", at<&S::longest_wait_step>, Int<std::uint64_t>{0, max_u64},
              Presence::required),
        field("longest_wait_ns", at<&S::longest_wait_ns>, Int<std::uint64_t>{0, max_u64},
              Presence::required),
        field("bytes_sent", at<&S::bytes_sent>, Int<std::uint64_t>{0, max_u64}, Presence::required),
        field("bytes_received", at<&S::bytes_received>, Int<std::uint64_t>{0, max_u64},
              Presence::required),
        field("output_crc32", at<&S::output_crc32>, Int<std::uint32_t>{0, max_u32},
              Presence::extra)};
    return f;
  }
  static void check(const Object&, S& c) {
    if (c.iteration_end_ns.size() != c.iterations)
      reject(fmt::format("results: collective.iteration_end_ns has {} entries for {} iterations",
                         c.iteration_end_ns.size(), c.iterations));
    if (c.wait_ns.size() != c.step_ns.size())
      reject(fmt::format("results: collective.wait_ns has {} steps but step_ns {}",
                         c.wait_ns.size(), c.step_ns.size()));
    if (c.longest_wait_ns > c.wait_total_ns)
      reject(fmt::format("results: collective.longest_wait_ns {} is more than wait_total_ns {}",
                         c.longest_wait_ns, c.wait_total_ns));
    if (!c.wait_ns.empty() && c.longest_wait_step >= c.wait_ns.size())
      reject(fmt::format("results: collective.longest_wait_step {} is past its {} steps",
                         c.longest_wait_step, c.wait_ns.size()));
  }
};

template <>
struct Describe<traffic::NicCounterDelta> {
  using S = traffic::NicCounterDelta;
  using N = traffic::NicRef;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("device", MemberOf<&S::nic, &N::rdma_device>{}, Printable{64, true}),
        field("port", MemberOf<&S::nic, &N::port>{}, Int<std::uint8_t>{1, 255}),
        field("netdev", MemberOf<&S::nic, &N::netdev>{}, Printable{64, true}),
        field("seconds", at<&S::seconds>, Finite{}),
        field("deltas", at<&S::deltas>, Custom<std::map<std::string, std::uint64_t>>{read_deltas},
              Presence::required),
        field("reset", at<&S::reset>, List<Printable>{{128, false}, 0, max_nic_counters}),
        field("problems", at<&S::problems>, List<Printable>{{1000, false}, 0, 64}),
        field("device_reset", at<&S::device_reset>, Printable{300, true})};
    return f;
  }
};

template <>
struct Describe<traffic::DeviceEvent> {
  using S = traffic::DeviceEvent;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("at_ns", at<&S::at_ns>, Int<std::int64_t>{0, max_i64}, Presence::required),
                   field("device", at<&S::device>, Printable{64, false}, Presence::required),
                   field("kind", at<&S::kind>, Printable{64, false}, Presence::required),
                   field("detail", at<&S::detail>, Printable{300, true})};
    return f;
  }
};

// What bent the agent's timing over its work (common's SchedulingReport). A value the host's
// kernel does not give is absent, never 0: a reader tells "no steal" from "not known".
template <>
struct Describe<SchedulingReport> {
  using S = SchedulingReport;
  static constexpr double most_us = 86400e6;  // a day: no wake-up is later than the run
  static const auto& fields() {
    static const auto f = std::tuple{
        field("seconds", at<&S::seconds>, Number{0, false, 86400 * 366.0}, Presence::required),
        field("cpus", at<&S::cpus>, Int<std::uint32_t>{0, 1u << 20}, Presence::required),
        field("wakeups", at<&S::wakeups>, Int<std::uint64_t>{0, max_u64}, Presence::required),
        field("wake_late_p50_us", at<&S::wake_late_p50_us>, Number{0, false, most_us},
              Presence::required),
        field("wake_late_p99_us", at<&S::wake_late_p99_us>, Number{0, false, most_us},
              Presence::required),
        field("wake_late_max_us", at<&S::wake_late_max_us>, Number{0, false, most_us},
              Presence::required),
        field("thread_wait_max_ms", at<&S::thread_wait_max_ms>, Number{0, false, 1e12},
              Presence::extra),
        field("threads_wait_ms", at<&S::threads_wait_ms>, Number{0, false, 1e12}, Presence::extra),
        field("steal_share", at<&S::steal_share>, Number{0, false, 1}, Presence::extra),
        field("pressure_some_share", at<&S::pressure_some_share>, Number{0, false, 1},
              Presence::extra),
        field("pressure_some_avg10", at<&S::pressure_some_avg10>, Number{0, false, 100},
              Presence::extra),
        field("run_queue_max", at<&S::run_queue_max>, Int<std::uint32_t>{0, max_u32},
              Presence::extra),
        field("load1", at<&S::load1>, Number{0, false, 1e9}, Presence::extra)};
    return f;
  }
  static void check(const Object&, S& r) {
    if (r.wake_late_p50_us > r.wake_late_p99_us || r.wake_late_p99_us > r.wake_late_max_us)
      reject(
          fmt::format("results: cpu wake_late_p50_us {} <= wake_late_p99_us {} <= "
                      "wake_late_max_us {} does not hold",
                      r.wake_late_p50_us, r.wake_late_p99_us, r.wake_late_max_us));
    if (r.thread_wait_max_ms && r.threads_wait_ms && *r.thread_wait_max_ms > *r.threads_wait_ms)
      reject(fmt::format("results: cpu.thread_wait_max_ms {} is more than threads_wait_ms {}",
                         *r.thread_wait_max_ms, *r.threads_wait_ms));
  }
};

constexpr std::string_view pacing_method_names[] = {"nic", "engine"};

template <>
struct Describe<PacingReport> {
  using S = PacingReport;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("method", at<&S::method>, Choice{pacing_method_names}, Presence::required),
        field("asked_bps", at<&S::asked_bps>, Number{0, true, max_rate_bps}, Presence::required),
        field_when(
            "per_qp_bps", at<&S::per_qp_bps>, Number{0, true, max_rate_bps},
            [](const S& r) { return r.per_qp_bps > 0; }, Presence::extra),
        field_when(
            "nic_refused", at<&S::nic_refused>, Text{},
            [](const S& r) { return !r.nic_refused.empty(); }, Presence::extra),
        field("held_s", at<&S::held_s>, Number{0, false, 1e9}, Presence::extra),
        field("lost_s", at<&S::lost_s>, Number{0, false, 1e9}, Presence::extra),
        field("burst_s", at<&S::burst_s>, Number{0, false, 1e9}, Presence::extra)};
    return f;
  }
  static void check(const Object&, S& r) {
    if ((r.held_s || r.lost_s || r.burst_s) && r.method != "engine")
      reject(
          "results: pacing: 'held_s', 'lost_s' and 'burst_s' are the engine's token "
          "bucket's, not the NIC's");
    if ((r.method == "nic") != (r.per_qp_bps > 0))
      reject("results: pacing: 'per_qp_bps' goes with method \"nic\", and only with it");
    if (r.method == "nic" && !r.nic_refused.empty())
      reject("results: pacing: method \"nic\" with 'nic_refused': the NIC either paced or not");
  }
};

template <>
struct Describe<ProgressTimeline> {
  using S = ProgressTimeline;
  static constexpr List<Int<std::uint64_t>> samples{{0, max_u64}, 0, max_timeline_samples};
  static const auto& fields() {
    static const auto f = std::tuple{
        field("start_ns", at<&S::start_ns>, Int<std::int64_t>{0, max_i64}, Presence::required),
        field("period_us", at<&S::period_us>, Int<std::uint32_t>{1, max_u32}, Presence::required),
        field("t_us", at<&S::t_us>, samples, Presence::required),
        field("bytes", at<&S::bytes>, samples, Presence::required)};
    return f;
  }
  static void check(const Object&, S& t) {
    if (t.t_us.size() != t.bytes.size())
      reject(fmt::format("results: timeline has {} times for {} byte counts", t.t_us.size(),
                         t.bytes.size()));
    for (std::size_t i = 1; i < t.t_us.size(); ++i) {
      if (t.t_us[i] < t.t_us[i - 1])
        reject(fmt::format("results: timeline.t_us goes back at sample {}", i));
      if (t.bytes[i] < t.bytes[i - 1])
        reject(
            fmt::format("results: timeline.bytes goes back at sample {}: completed bytes "
                        "only grow",
                        i));
    }
  }
};

template <>
struct Describe<ResultsEvent> {
  using S = ResultsEvent;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("workload", at<&S::workload>, EnumChoice<Workload>{workload_names},
              Presence::required),
        field("role", at<&S::role>, EnumChoice<Role>{role_names}, Presence::required),
        field("stopped", at<&S::stopped>, Bool{}), field("seconds", at<&S::seconds>, Finite{}),
        field("messages", at<&S::messages>, Int<std::uint64_t>{0, max_u64}),
        field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
        field("gbps", at<&S::gbps>, Finite{}),
        field("messages_per_s", at<&S::messages_per_s>, Finite{}),
        field("errors", at<&S::errors>, Int<std::uint64_t>{0, max_u64}),
        field("first_error", at<&S::first_error>, Text{}),
        field("first_error_status", at<&S::first_error_status>, WcFailure{}, Presence::extra),
        field("per_qp", at<&S::per_qp>,
              List<Nested<QpResult>>{{Strictness::strict}, 0, max_agent_qps, " (one per QP)"},
              Presence::required),
        field("gpu_registration", at<&S::gpu_registration>, Choice{gpu_registration_names},
              Presence::extra),
        // Only lat has a latency summary, only a collective its report, only a verbs NIC deltas.
        field("latency", at<&S::latency>, Nested<LatencySummary>{Strictness::strict},
              Presence::extra),
        field("collective", at<&S::collective>, Nested<CollectiveReport>{Strictness::lenient},
              Presence::extra),
        field_when(
            "events", at<&S::events>,
            List<Nested<traffic::DeviceEvent>>{
                {Strictness::strict}, 0, traffic::max_device_events, " (the device's events)"},
            [](const S& r) { return !r.events.empty(); }, Presence::extra),
        field_when(
            "nics", at<&S::nics>,
            List<Nested<traffic::NicCounterDelta>>{{Strictness::lenient}, 0, max_agent_nics},
            [](const S& r) { return !r.nics.empty(); }, Presence::extra),
        // Absent from an agent that did not measure it (older, or no work ran).
        field("cpu", at<&S::cpu>, Nested<SchedulingReport>{Strictness::strict}, Presence::extra),
        field("pacing", at<&S::pacing>, Nested<PacingReport>{Strictness::strict}, Presence::extra),
        field("timeline", at<&S::timeline>, Nested<ProgressTimeline>{Strictness::strict},
              Presence::extra)};
    return f;
  }
  static void check(const Object&, S& r) {
    if (r.first_error_status && r.errors == 0)
      reject("results: first_error_status without errors: a run with no errors has no first one");
  }
};

template <>
struct Describe<ErrorReply> {
  static const auto& fields() {
    static const auto f = std::tuple{field("error", at<&ErrorReply::message>, Text{})};
    return f;
  }
};

template <>
struct Describe<CaptureStartedReply> {
  using S = CaptureStartedReply;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("iface", at<&S::iface>, Text{}), field("description", at<&S::description>, Text{}),
        field("speed_bps", at<&S::speed_bps>, Int<std::uint64_t>{0, max_u64})};
    return f;
  }
};

template <>
struct Describe<CaptureSummaryEvent> {
  using S = CaptureSummaryEvent;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("stopped", at<&S::stopped>, Bool{}),
        field("backend", at<&S::backend>, Choice{capture_backend_names}),
        field("iface", at<&S::iface>, Text{}),
        field("filter", at<&S::filter>, Choice{capture_filter_names}),
        field("snaplen", at<&S::snaplen>, Int<std::uint32_t>{0, max_u32}),
        field("start_ns", at<&S::start_ns>, Int<std::uint64_t>{0, max_u64}),
        field("end_ns", at<&S::end_ns>, Int<std::uint64_t>{0, max_u64}),
        field("frames", at<&S::frames>, Int<std::uint64_t>{0, max_u64}),
        field("dropped_buffer", at<&S::dropped_buffer>, Int<std::uint64_t>{0, max_u64}),
        field("dropped_interface", at<&S::dropped_interface>, Int<std::uint64_t>{0, max_u64}),
        field("lost_upstream", at<&S::lost_upstream>, Int<std::uint64_t>{0, max_u64}),
        field("coverage", at<&S::coverage>, Number{0, false, 1}),
        field("files", at<&S::files>, texts),
        field("files_deleted", at<&S::files_deleted>, Int<std::uint64_t>{0, max_u64}),
        field("write_error", at<&S::write_error>, Text{}),
        field("analysis", at<&S::analysis_json>, Custom<std::string>{read_analysis, write_analysis},
              Presence::required)};
    return f;
  }
};

template <>
struct Describe<PerftestRequest> {
  using S = PerftestRequest;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("role", at<&S::role>, EnumChoice<Role>{role_names}, Presence::required),
        field("tool", at<&S::tool>, Choice{perftest_tool_names}, Presence::required),
        field("device", at<&S::device>, Custom<std::string>{device_name}),
        field("port", at<&S::port>, Int<std::uint8_t>{1, 255}),
        field("gid_index", at<&S::gid_index>, Int<int>{-1, 255}),
        field("size", at<&S::size>, Int<std::uint64_t>{1, std::uint64_t{1} << 32}),
        field("qps", at<&S::qps>, Int<std::uint32_t>{1, max_agent_qps}),
        field("tx_depth", at<&S::tx_depth>, Int<std::uint32_t>{0, 15000}),
        field("seconds", at<&S::seconds>, Int<std::uint32_t>{0, 86400}),
        field("iterations", at<&S::iterations>, Int<std::uint64_t>{0, 100'000'000}),
        field("mtu", at<&S::mtu>, Int<std::uint32_t>{0, 4096}),
        field("traffic_class", at<&S::traffic_class>, Int<int>{-1, 255}),
        field("sl", at<&S::sl>, Int<int>{-1, 7}),
        field("inline_bytes", at<&S::inline_bytes>, Int<int>{-1, 912}),
        field("bidirectional", at<&S::bidirectional>, Bool{}),
        field("transport", at<&S::transport>, EnumChoice<traffic::QpType>{transport_names}),
        field_when(
            "server", at<&S::server>, Custom<std::string>{ip_address},
            [](const S& s) { return !s.server.empty(); }, Presence::extra),
        field("tcp_port", at<&S::tcp_port>, Int<std::uint16_t>{0, max_u16}),
        field("timeout_s", at<&S::timeout_s>, Number{0, false, 7 * 86400}),
        field_when(
            "rate_bps", at<&S::rate_bps>, Number{0, true, max_rate_bps},
            [](const S& s) { return s.rate_bps > 0; }, Presence::extra)};
    return f;
  }
  static void check(const Object& o, S& s);
};

template <>
struct Describe<perftest::BwRow> {
  using S = perftest::BwRow;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
                   field("iterations", at<&S::iterations>, Int<std::uint64_t>{0, max_u64}),
                   field("peak_gbps", at<&S::peak_gbps>, Finite{}, Presence::extra),
                   field("average_gbps", at<&S::average_gbps>, Finite{}),
                   field("msg_rate_mpps", at<&S::msg_rate_mpps>, Finite{})};
    return f;
  }
};

// A duration run's latency row has only the average and the rate: the rest stay absent.
template <>
struct Describe<perftest::LatRow> {
  using S = perftest::LatRow;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
                   field("iterations", at<&S::iterations>, Int<std::uint64_t>{0, max_u64}),
                   field("min_us", at<&S::min_us>, Finite{}, Presence::extra),
                   field("max_us", at<&S::max_us>, Finite{}, Presence::extra),
                   field("typical_us", at<&S::typical_us>, Finite{}, Presence::extra),
                   field("avg_us", at<&S::avg_us>, Finite{}, Presence::extra),
                   field("stdev_us", at<&S::stdev_us>, Finite{}, Presence::extra),
                   field("p99_us", at<&S::p99_us>, Finite{}, Presence::extra),
                   field("p999_us", at<&S::p999_us>, Finite{}, Presence::extra),
                   field("tps", at<&S::tps>, Finite{}, Presence::extra)};
    return f;
  }
};

template <>
struct Describe<perftest::Report> {
  using S = perftest::Report;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("layout", at<&S::layout>, Text{}),
        field("test", at<&S::test>, Text{}),
        field("device", at<&S::device>, Text{}),
        field("connection", at<&S::connection>, Text{}),
        field("link_type", at<&S::link_type>, Text{}),
        field("qps", at<&S::qps>, Int<std::uint32_t>{0, max_u32}, Presence::extra),
        field("mtu", at<&S::mtu>, Int<std::uint32_t>{0, max_u32}, Presence::extra),
        field("bw", at<&S::bw>, Nested<perftest::BwRow>{Strictness::strict}, Presence::extra),
        field("lat", at<&S::lat>, Nested<perftest::LatRow>{Strictness::strict}, Presence::extra)};
    return f;
  }
  static void check(const Object&, S& r) {
    if (r.bw.has_value() == r.lat.has_value())
      reject("perftest_results: report must have exactly one of 'bw' and 'lat'");
  }
};

template <>
struct Describe<PerftestListeningReply> {
  static const auto& fields() {
    static const auto f = std::tuple{
        field("tcp_port", at<&PerftestListeningReply::tcp_port>, Int<std::uint16_t>{1, max_u16})};
    return f;
  }
};

template <>
struct Describe<PerftestResultsEvent> {
  using S = PerftestResultsEvent;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("role", at<&S::role>, EnumChoice<Role>{role_names}, Presence::required),
        field("tool", at<&S::tool>, Choice{perftest_tool_names}, Presence::required),
        field("stopped", at<&S::stopped>, Bool{}),
        field("command", at<&S::command>, List<Printable>{{4096, false}, 0, 64}),
        field("version", at<&S::version>, Printable{64, true}),
        field("exit_code", at<&S::exit_code>, Int<int>{-255, 255}),
        field("seconds", at<&S::seconds>, Finite{}),
        field("report", at<&S::report>, Nested<perftest::Report>{Strictness::strict},
              Presence::extra),
        field("error", at<&S::error>, Text{}),
        field("output", at<&S::output>, Text{}),
        field_when(
            "nics", at<&S::nics>,
            List<Nested<traffic::NicCounterDelta>>{{Strictness::lenient}, 0, max_agent_nics},
            [](const S& r) { return !r.nics.empty(); }, Presence::extra)};
    return f;
  }
};

template <>
struct Describe<Iperf3Request> {
  using S = Iperf3Request;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("role", at<&S::role>, EnumChoice<Role>{role_names}, Presence::required),
        field("protocol", at<&S::protocol>, Choice{iperf3_protocol_names}),
        field("bind", at<&S::bind>, Custom<std::string>{ip_address}, Presence::required),
        field_when(
            "server", at<&S::server>, Custom<std::string>{ip_address},
            [](const S& s) { return !s.server.empty(); }, Presence::extra),
        field("port", at<&S::port>, Int<std::uint16_t>{0, max_u16}),
        field("seconds", at<&S::seconds>, Int<std::uint32_t>{1, iperf::max_seconds}),
        field("rate_bps", at<&S::rate_bps>, Int<std::uint64_t>{0, std::uint64_t{1600} << 30}),
        field("tos", at<&S::tos>, Int<int>{-1, 255}),
        field("streams", at<&S::streams>, Int<std::uint32_t>{1, iperf::max_streams}),
        field("at_ns", at<&S::at_ns>, Int<std::int64_t>{0, max_i64}),
        field("timeout_s", at<&S::timeout_s>, Number{0, false, 7 * 86400})};
    return f;
  }
  static void check(const Object& o, S& s);
};

template <>
struct Describe<iperf::Sum> {
  using S = iperf::Sum;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("seconds", at<&S::seconds>, Finite{}),
        field("bytes", at<&S::bytes>, Int<std::uint64_t>{0, max_u64}),
        field("bits_per_second", at<&S::bits_per_second>, Finite{}),
        field("retransmits", at<&S::retransmits>, Int<std::uint64_t>{0, max_u64}, Presence::extra),
        field("packets", at<&S::packets>, Int<std::uint64_t>{0, max_u64}, Presence::extra),
        field("lost_packets", at<&S::lost_packets>, Int<std::uint64_t>{0, max_u64},
              Presence::extra),
        field("jitter_ms", at<&S::jitter_ms>, Finite{}, Presence::extra)};
    return f;
  }
};

template <>
struct Describe<iperf::Report> {
  using S = iperf::Report;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("version", at<&S::version>, Printable{64, true}),
        field("protocol", at<&S::protocol>, Printable{16, true}),
        field("streams", at<&S::streams>, Int<std::uint32_t>{0, max_u32}, Presence::extra),
        field("tos", at<&S::tos>, Int<int>{0, 255}, Presence::extra),
        field("duration_s", at<&S::duration_s>, Finite{}, Presence::extra),
        field("target_bitrate", at<&S::target_bitrate>, Int<std::uint64_t>{0, max_u64},
              Presence::extra),
        field("sent", at<&S::sent>, Nested<iperf::Sum>{Strictness::strict}, Presence::extra),
        field("received", at<&S::received>, Nested<iperf::Sum>{Strictness::strict},
              Presence::extra),
        field("error", at<&S::error>, Text{})};
    return f;
  }
};

template <>
struct Describe<Iperf3ListeningReply> {
  static const auto& fields() {
    static const auto f =
        std::tuple{field("port", at<&Iperf3ListeningReply::port>, Int<std::uint16_t>{1, max_u16})};
    return f;
  }
};

template <>
struct Describe<Iperf3ResultsEvent> {
  using S = Iperf3ResultsEvent;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("role", at<&S::role>, EnumChoice<Role>{role_names}, Presence::required),
        field("stopped", at<&S::stopped>, Bool{}),
        field("command", at<&S::command>, List<Printable>{{4096, false}, 0, 64}),
        field("exit_code", at<&S::exit_code>, Int<int>{-255, 255}),
        field("seconds", at<&S::seconds>, Finite{}),
        field("report", at<&S::report>, Nested<iperf::Report>{Strictness::strict}, Presence::extra),
        field("error", at<&S::error>, Text{}),
        field("output", at<&S::output>, Text{})};
    return f;
  }
};

// A name the settings catalogue knows, so that a misspelt one is refused before any host is
// asked (with the nearest known name).
std::string setting_name(const Value& v) {
  std::string name = printable(v, 64, false);
  if (settings::find(name) == nullptr) {
    const std::string_view near = settings::nearest(name);
    v.fail(near.empty() ? std::string("is not a setting rocehil knows (rocehil settings list)")
                        : fmt::format("is not a setting rocehil knows; did you mean '{}'?", near));
  }
  return name;
}

// The host's name as the inventory gives it; it names the host's journal file, so nothing that
// could leave the journal directory.
std::string host_name(const Value& v) {
  std::string name = printable(v, 128, false);
  const bool ok = name.front() != '.' && name.front() != '-' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return is_ascii_alnum(c) || c == '.' || c == '_' || c == '-';
                  });
  if (!ok) v.fail("must be a host name: letters, digits, '.', '_' and '-', not first '.' or '-'");
  return name;
}

template <>
struct Describe<SettingValue> {
  using S = SettingValue;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("name", at<&S::name>, Custom<std::string>{setting_name}, Presence::required),
        field_when(
            "value", at<&S::value>, Printable{64, false},
            [](const S& s) { return !s.value.empty(); }, Presence::extra),
        field_when(
            "netdev", at<&S::netdev>, Custom<std::string>{interface_name},
            [](const S& s) { return !s.netdev.empty(); }, Presence::extra)};
    return f;
  }
};

template <>
struct Describe<settings::JournalOwner> {
  using S = settings::JournalOwner;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("machine", at<&S::machine>, Printable{256, true}),
                   field("machine_id", at<&S::machine_id>, Printable{64, true}),
                   field("boot_id", at<&S::boot_id>, Printable{64, false}, Presence::required),
                   field("pid", at<&S::pid>, Int<std::int64_t>{1, max_i64}, Presence::required),
                   field("start_ticks", at<&S::start_ticks>, Int<std::uint64_t>{0, max_u64},
                         Presence::required)};
    return f;
  }
};

template <>
struct Describe<SettingsRequest> {
  using S = SettingsRequest;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("action", at<&S::action>, EnumChoice<SettingsAction>{settings_action_names},
              Presence::required),
        field("host", at<&S::host>, Custom<std::string>{host_name}, Presence::required),
        field("provider", at<&S::provider>, Choice{provider_names}),
        field("addresses", at<&S::addresses>,
              List<Custom<std::string>>{{ip_address}, 1, max_settings_addresses},
              Presence::required),
        field("run", at<&S::run>, Printable{256, true}),
        field("values", at<&S::values>,
              List<Nested<SettingValue>>{{Strictness::strict}, 0, max_settings_values}),
        // Absent unless set: a request that names no fabric or owner reads as an older
        // controller's did.
        field_when(
            "fabric", at<&S::fabric>, Custom<std::string>{host_name},
            [](const S& s) { return !s.fabric.empty(); }, Presence::extra),
        field_when(
            "owner", at<&S::owner>, Nested<settings::JournalOwner>{Strictness::strict},
            [](const S& s) { return s.owner.has_value(); }, Presence::extra),
        field_when(
            "gone", at<&S::gone>,
            List<Nested<settings::JournalOwner>>{{Strictness::strict}, 0, max_settings_values},
            [](const S& s) { return !s.gone.empty(); }, Presence::extra),
        field_when(
            "force", at<&S::force>, Bool{}, [](const S& s) { return s.force; }, Presence::extra)};
    return f;
  }
  static void check(const Object& o, S& s);
};

template <>
struct Describe<SettingsInUse> {
  using S = SettingsInUse;
  static const auto& fields() {
    static const auto f =
        std::tuple{field("run", at<&S::run>, Text{}), field("since", at<&S::since>, Text{}),
                   field("owner", at<&S::owner>, Nested<settings::JournalOwner>{Strictness::strict},
                         Presence::required),
                   field("alive", at<&S::alive>, Bool{})};
    return f;
  }
};

template <>
struct Describe<SettingChange> {
  using S = SettingChange;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("name", at<&S::name>, Custom<std::string>{setting_name}, Presence::required),
        field("netdev", at<&S::netdev>, Printable{64, true}), field("where", at<&S::where>, Text{}),
        field("before", at<&S::before>, Text{}), field("wanted", at<&S::wanted>, Text{})};
    return f;
  }
};

template <>
struct Describe<SettingsReply> {
  using S = SettingsReply;
  static const auto& fields() {
    static const auto f = std::tuple{
        field("action", at<&S::action>, EnumChoice<SettingsAction>{settings_action_names},
              Presence::required),
        field("changes", at<&S::changes>, List<Nested<SettingChange>>{{Strictness::strict}}),
        field("journal_found", at<&S::journal_found>, Bool{}),
        field("journal_run", at<&S::journal_run>, Text{}),
        field_when(
            "in_use", at<&S::in_use>,
            List<Nested<SettingsInUse>>{{Strictness::strict}, 0, 4 * (max_settings_addresses + 1)},
            [](const S& r) { return !r.in_use.empty(); }, Presence::extra),
        field("values", at<&S::values>, List<Nested<SettingValue>>{{Strictness::strict}})};
    return f;
  }
};

// Each action's own fields: apply's values given and valid (in the catalogue's canonical form,
// so what is journaled and compared is one spelling), read's only named, restore's none.
void Describe<SettingsRequest>::check(const Object& o, SettingsRequest& s) {
  const auto values = o.get("values");
  switch (s.action) {
    case SettingsAction::apply:
    case SettingsAction::check:
      if (s.values.empty())
        reject(fmt::format("settings: action \"{}\" needs 'values' (name and value)",
                           to_string(s.action)));
      for (std::size_t i = 0; i < s.values.size(); ++i) try {
          s.values[i].value =
              settings::canonical_value(*settings::find(s.values[i].name), s.values[i].value);
        } catch (const Error& e) {
          values->at(i).fail(e.what());
        }
      break;
    case SettingsAction::read:
      for (std::size_t i = 0; i < s.values.size(); ++i)
        if (!s.values[i].value.empty())
          values->at(i).fail("a read names settings; it gives no values");
      break;
    case SettingsAction::restore:
      if (!s.values.empty()) reject("settings: action \"restore\" takes no 'values'");
      break;
  }
  if (s.action != SettingsAction::restore && (s.force || !s.gone.empty()))
    reject(fmt::format("settings: 'gone' and 'force' belong to a restore, not \"{}\"",
                       to_string(s.action)));
}

void Describe<SetupRequest>::check(const Object& o, SetupRequest& s) {
  if (auto v = o.get("udp_sports")) {
    const std::size_t n = v->array();
    if (n != 0 && n != s.qps)
      reject(fmt::format(
          "setup: field 'udp_sports' has {} entries but qps is {}: give one port per QP, or none",
          n, s.qps));
    for (std::size_t i = 0; i < n; ++i)
      s.udp_sports.push_back(v->at(i).integer<std::uint16_t>(1, max_u16));
  }
  if (auto v = o.get("traffic_classes")) {
    const std::size_t n = v->array();
    if (n == 0 || n > s.qps)
      reject(
          fmt::format("setup: field 'traffic_classes' has {} entries but qps is {}: give 1 to "
                      "{} classes (QP i gets item i % n), or leave it out",
                      n, s.qps, s.qps));
    for (std::size_t i = 0; i < n; ++i)
      s.traffic_classes.push_back(v->at(i).integer<std::uint8_t>(0, 255));
  }
  const bool opcode_given = o.optional("opcode").has_value();
  if (s.workload == Workload::collective) {
    if (!s.collective)
      reject("setup: workload \"collective\" needs field 'collective' (pattern, ranks, rank)");
    // Per connection; the rank's total (its peers x qps) is the agent's to check, with the plan.
    if (s.qps > traffic::max_qps_per_connection)
      reject(fmt::format("setup: a collective takes at most {} qps per connection, got {}",
                         traffic::max_qps_per_connection, s.qps));
    if (opcode_given)
      reject("setup: a collective moves its data with write_with_imm: drop 'opcode'");
    if (s.bidirectional || s.role != Role::client)
      reject("setup: a collective has no roles or directions: drop 'role' and 'bidirectional'");
    if (s.gpu >= 0) reject("setup: a collective checks its data in host memory: drop 'gpu'");
  } else if (s.collective) {
    reject(fmt::format("setup: field 'collective' needs workload \"collective\", not \"{}\"",
                       to_string(s.workload)));
  }
  if (s.workload == Workload::lat) {
    // lat is one ping-pong over SEND on one QP; anything else would measure something else.
    if (s.qps != 1) reject(fmt::format("setup: workload \"lat\" needs qps 1, got {}", s.qps));
    if (s.bidirectional)
      reject("setup: bidirectional needs workload \"bw\" (lat is already a ping-pong)");
    if (opcode_given && s.opcode != traffic::Opcode::send)
      reject(fmt::format(
          "setup: workload \"lat\" pings with opcode \"send\", got \"{}\": drop 'opcode' or set "
          "it to \"send\"",
          traffic::to_string(s.opcode)));
    s.opcode = traffic::Opcode::send;
  }
  if (s.transport == traffic::QpType::ud) {
    // A UD message is one packet, sent with SEND into a posted receive, on a QP whose source
    // port the NIC picks.
    if (s.workload != Workload::bw)
      reject(fmt::format("setup: transport \"ud\" needs workload \"bw\", not \"{}\"",
                         to_string(s.workload)));
    if (s.opcode != traffic::Opcode::send)
      reject(fmt::format("setup: transport \"ud\" sends with opcode \"send\", got \"{}\"",
                         traffic::to_string(s.opcode)));
    if (s.message_bytes > s.mtu)
      reject(
          fmt::format("setup: a UD message is one packet: message_bytes must be at most the mtu "
                      "({}), got {}",
                      s.mtu, s.message_bytes));
    if (!s.udp_sports.empty())
      reject("setup: UD QPs take no per-QP source port: drop 'udp_sports'");
  }
  // Only a bw sender has a rate to hold: a server of a one-way run, a ping-pong and a
  // collective (paced per host, not per rank, were it paced) send nothing it could mean.
  if (s.rate_bps > 0 && s.workload != Workload::bw)
    reject(fmt::format("setup: 'rate_bps' paces a bw sender; workload \"{}\" takes none",
                       to_string(s.workload)));
  if (s.rate_bps > 0 && s.role == Role::server && !s.bidirectional)
    reject(
        "setup: 'rate_bps' goes to the side that sends: a one-way bw server only answers; give "
        "it to the client");
  const std::uint64_t total = std::uint64_t{s.qps} * s.message_bytes;
  if (total > max_setup_buffer_bytes)
    reject(fmt::format(
        "setup: qps * message_bytes must be at most 4 GiB ({}), got {} * {} = {}: use fewer QPs "
        "or smaller messages",
        max_setup_buffer_bytes, s.qps, s.message_bytes, total));
}

void Describe<CaptureStartRequest>::check(const Object&, CaptureStartRequest& c) {
  if (c.remote_source && !c.remote_session)
    reject("capture_start: field 'remote_source' goes with 'remote_session': the session to take");
  if (c.backend == "pcap" && c.iface.empty())
    reject("capture_start: backend \"pcap\" needs field 'iface': the interface to capture on");
  if (c.backend == "pcap" && !c.dpdk_args.empty())
    reject("capture_start: field 'dpdk_args' is for backend \"dpdk\"");
  if (c.backend == "dpdk" && c.dpdk_args.empty())
    reject("capture_start: backend \"dpdk\" needs field 'dpdk_args': the EAL arguments");
  if ((c.ring_files == 0) != (c.ring_mb == 0))
    reject(
        "capture_start: fields 'ring_files' and 'ring_mb' go together: how many files of "
        "how many MiB");
  if (c.ring_files != 0 && c.write.empty())
    reject("capture_start: a ring of files needs field 'write': the base name");
}

// The roles' own fields, then what perftest itself would refuse (the same checks the agent's
// command builder makes, so a request that passes here builds).
void Describe<PerftestRequest>::check(const Object&, PerftestRequest& p) {
  if (p.role == Role::client && (p.server.empty() || p.tcp_port == 0))
    reject(
        "perftest: role \"client\" needs fields 'server' and 'tcp_port': where the server "
        "side listens (its perftest_listening reply)");
  if (p.role == Role::server && !p.server.empty())
    reject("perftest: role \"server\" takes no 'server': it listens for the client");
  if (p.rate_bps > 0 && p.role == Role::server && !p.bidirectional)
    reject(
        "perftest: 'rate_bps' goes to the side that sends: a one-way run's server only "
        "answers; give it to the client");
  try {
    (void)perftest::command_words(perftest_options(p));
  } catch (const Error& e) {
    reject(std::string("perftest: ") + e.what());
  }
}

// The roles' own fields, then what iperf3 itself would refuse (the same checks the agent's
// command builder makes, so a request that passes here builds).
void Describe<Iperf3Request>::check(const Object&, Iperf3Request& p) {
  if (p.role == Role::client && (p.server.empty() || p.port == 0))
    reject(
        "iperf3: role \"client\" needs fields 'server' and 'port': where the server side "
        "listens (its iperf3_listening reply)");
  if (p.role == Role::server && !p.server.empty())
    reject("iperf3: role \"server\" takes no 'server': it listens for the client");
  if (p.role == Role::server && p.port != 0)
    reject("iperf3: role \"server\" takes no 'port': its agent picks a free one");
  if (p.role == Role::server && (p.rate_bps != 0 || p.tos != -1 || p.streams != 1))
    reject(
        "iperf3: role \"server\" takes no 'rate_bps', 'tos' or 'streams': the client sends "
        "them over iperf3's control connection");
  if (p.role == Role::server && p.at_ns != 0)
    reject("iperf3: role \"server\" takes no 'at_ns': it listens at once, for the client's start");
  iperf::CommandOptions options = iperf3_options(p);
  if (options.server) options.port = 5201;  // checked as any port; the agent picks the real one
  try {
    (void)iperf::command_words(options);
  } catch (const Error& e) {
    reject(std::string("iperf3: ") + e.what());
  }
}

namespace {

// Checks v and op, reads id and session; returns the op's index in `ops`. `id` and `session` are
// set as soon as valid ones are seen, before any check can reject the line, so even a refusal
// can carry them back.
std::size_t read_envelope(const json& doc, std::span<const std::string_view> ops,
                          std::string_view side, std::optional<std::uint64_t>& id,
                          SessionId& session) {
  const auto id_it = doc.find("id");
  if (id_it != doc.end()) id = as_u64(*id_it);
  const auto session_it = doc.find("session");
  std::optional<std::uint64_t> session_value;
  if (session_it != doc.end()) session_value = as_u64(*session_it);
  if (session_value && *session_value <= std::numeric_limits<SessionId>::max())
    session = static_cast<SessionId>(*session_value);

  const auto v = doc.find("v");
  if (v == doc.end())
    reject(fmt::format("missing field 'v' (the protocol version; this {} speaks {}): {}", side,
                       agent_protocol_version, version_fix));
  if (as_u64(*v) != std::uint64_t{agent_protocol_version})
    reject(fmt::format("protocol version {} is not supported (this {} speaks {}): {}", echo(*v),
                       side, agent_protocol_version, version_fix));

  const auto op = doc.find("op");
  if (op == doc.end()) reject(fmt::format("missing field 'op' (known: {})", join(ops)));
  if (!op->is_string()) reject(fmt::format("field 'op' must be a string, got {}", echo(*op)));
  const auto& name = op->get_ref<const std::string&>();
  std::size_t index = 0;
  while (index < ops.size() && ops[index] != name) ++index;
  if (index == ops.size())
    reject(fmt::format("unknown op {} (known: {})", quote_text(name, '\''), join(ops)));

  if (id_it != doc.end() && !id)
    Value(*id_it, ops[index], "id").fail(fmt::format("must be an integer from 0 to {}", max_u64));
  if (session_it != doc.end() &&
      (!session_value || *session_value > std::numeric_limits<SessionId>::max()))
    Value(*session_it, ops[index], "session")
        .fail(
            fmt::format("must be an integer from 0 to {}", std::numeric_limits<SessionId>::max()));
  return index;
}

// The body of op `op` of the variant: its alternative, read by its description.
template <class Body, std::size_t... I>
Body read_body(std::size_t op, const Object& o, std::index_sequence<I...>) {
  using Reader = Body (*)(const Object&);
  static constexpr Reader readers[] = {[](const Object& obj) -> Body {
    return Body{std::in_place_index<I>, read_message<std::variant_alternative_t<I, Body>>(obj)};
  }...};
  return readers[op](o);
}

template <class Message>
std::string write_line(const Message& message, std::span<const std::string_view> ops) {
  ordered j;
  j["v"] = agent_protocol_version;
  j["op"] = std::string(ops[message.body.index()]);
  if (message.id) j["id"] = *message.id;
  if (message.session != 0) j["session"] = message.session;
  std::visit([&j](const auto& body) { write_fields(j, body); }, message.body);
  // replace: a string with broken UTF-8 (a device's detail text, say) must not throw here.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace
}  // namespace wire

using namespace wire;

std::string_view to_string(Workload workload) {
  const auto i = static_cast<std::size_t>(workload);
  return i < std::size(workload_names) ? workload_names[i] : "?";
}
std::string_view to_string(SettingsAction action) {
  const auto i = static_cast<std::size_t>(action);
  return i < std::size(settings_action_names) ? settings_action_names[i] : "?";
}

void fold_step_waits(CollectiveReport& report, bool keep_each_step) {
  const std::vector<std::uint64_t>& waits = report.wait_ns;
  report.wait_total_ns = 0;
  report.longest_wait_step = 0;
  report.longest_wait_ns = 0;
  for (std::size_t s = 0; s < waits.size(); ++s) {
    report.wait_total_ns =
        waits[s] > max_u64 - report.wait_total_ns ? max_u64 : report.wait_total_ns + waits[s];
    if (waits[s] > report.longest_wait_ns) {
      report.longest_wait_ns = waits[s];
      report.longest_wait_step = s;
    }
  }
  if (waits.size() > max_steps_reported && !keep_each_step) {
    report.wait_ns.clear();
    report.step_ns.clear();
  }
}

std::string_view to_string(Role role) {
  const auto i = static_cast<std::size_t>(role);
  return i < std::size(role_names) ? role_names[i] : "?";
}

perftest::CommandOptions perftest_options(const PerftestRequest& p) {
  perftest::CommandOptions o;
  o.tool = perftest::tool_named(p.tool).value_or(perftest::Tool::write_bw);
  o.device = p.device;
  o.ib_port = p.port;
  o.gid_index = p.gid_index;
  o.size = p.size;
  o.qps = p.qps;
  o.tx_depth = p.tx_depth;
  o.seconds = p.seconds;
  o.iterations = p.iterations;
  o.mtu = p.mtu;
  o.traffic_class = p.traffic_class;
  o.sl = p.sl;
  o.inline_bytes = p.inline_bytes;
  o.bidirectional = p.bidirectional;
  o.ud = p.transport == traffic::QpType::ud;
  o.tcp_port = p.tcp_port == 0 ? std::uint16_t{18515} : p.tcp_port;  // a server's is picked later
  o.server = p.server;
  o.rate_gbps = p.rate_bps / 1e9;
  return o;
}

double perftest_time_limit_s(const PerftestRequest& r) {
  if (r.timeout_s > 0) return r.timeout_s;
  const double work = r.seconds != 0      ? r.seconds
                      : r.iterations != 0 ? static_cast<double>(r.iterations) / 10000.0
                                          : 10.0;
  return work + 60;
}

iperf::CommandOptions iperf3_options(const Iperf3Request& p) {
  iperf::CommandOptions o;
  o.server = p.role == Role::server;
  o.bind = p.bind;
  o.connect_to = p.server;
  o.port = p.port;
  o.udp = p.protocol == "udp";
  o.seconds = p.seconds;
  o.rate_bps = p.rate_bps;
  o.tos = p.tos;
  o.streams = p.streams;
  return o;
}

double iperf3_time_limit_s(const Iperf3Request& r) {
  return r.timeout_s > 0 ? r.timeout_s : r.seconds + 60.0;
}

ParsedRequest parse_request(std::string_view line) {
  ParsedRequest out;
  try {
    const json doc = parse_object(line);
    Request request;
    const std::size_t op = read_envelope(doc, request_ops, "agent", out.id, out.session);
    request.id = out.id;
    request.session = out.session;
    request.body = read_body<RequestBody>(op, Object(doc, request_ops[op], "", false),
                                          std::make_index_sequence<std::size(request_ops)>{});
    out.request = std::move(request);
  } catch (Rejected& r) {
    out.error = std::move(r.message);
  } catch (const std::bad_alloc&) {
    out.error = "out of memory reading the line";
  }
  return out;
}

ParsedReply parse_reply(std::string_view line) {
  ParsedReply out;
  try {
    const json doc = parse_object(line);
    Reply reply;
    const std::size_t op = read_envelope(doc, reply_ops, "controller", reply.id, reply.session);
    reply.body = read_body<ReplyBody>(op, Object(doc, reply_ops[op], "", true),
                                      std::make_index_sequence<std::size(reply_ops)>{});
    out.reply = std::move(reply);
  } catch (Rejected& r) {
    out.error = std::move(r.message);
  } catch (const std::bad_alloc&) {
    out.error = "out of memory reading the line";
  }
  return out;
}

std::string to_json_line(const Request& request) {
  return write_line(request, request_ops);
}
std::string to_json_line(const Reply& reply) {
  return write_line(reply, reply_ops);
}

}  // namespace rocehil::agent
