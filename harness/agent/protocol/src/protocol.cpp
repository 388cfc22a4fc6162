#include "rocehil/agent/protocol.hpp"

#include "rocehil/agent/qp_counters_json.hpp"
#include "rocehil/traffic/collective.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>

#include <nlohmann/json.hpp>

#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace rocehil::agent {

using nlohmann::json;

namespace {

// Replies are written with the keys in a fixed, readable order (v, op, id first) rather than
// std::map's alphabetical one; the order carries no meaning and parsing ignores it.
using ordered = nlohmann::ordered_json;

// Deeper than any message needs (results nest 4 levels), shallow enough that a hostile `[[[[...`
// is refused by a linear pre-scan before the parser builds anything.
constexpr int max_json_depth = 16;
// How much of a received value an error message repeats: enough to recognise it, not enough to
// let a hostile line fill the controller's terminal.
constexpr std::size_t max_echo_bytes = 40;
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
constexpr std::string_view request_ops[] = {"hello", "setup",         "connect",     "start",
                                            "stop",  "capture_start", "capture_stop"};
constexpr std::string_view reply_ops[] = {"hello",   "setup",           "connected",
                                          "started", "stats",           "results",
                                          "error",   "capture_started", "capture_summary"};
static_assert(std::size(request_ops) == std::variant_size_v<RequestBody>);
static_assert(std::size(reply_ops) == std::variant_size_v<ReplyBody>);

constexpr std::string_view envelope_fields[] = {"v", "op", "id"};
constexpr std::string_view setup_fields[] = {
    "provider",       "device",     "port",          "gid_index",     "address",  "workload",
    "role",           "opcode",     "qps",           "message_bytes", "tx_depth", "mtu",
    "traffic_class",  "udp_sports", "bidirectional", "transport",     "gpu",      "retry_count",
    "ack_timeout_us", "collective"};
constexpr std::string_view collective_setup_fields[] = {
    "pattern", "ranks", "rank", "ranks_per_host", "pipeline", "seed", "strategy", "sport_seed"};
constexpr std::string_view collective_report_fields[] = {
    "iterations", "start_ns",   "iteration_end_ns", "wait_ns",
    "step_ns",    "bytes_sent", "bytes_received",   "output_crc32"};
constexpr std::string_view strategy_names[] = {"split", "round_robin"};
constexpr std::uint32_t max_collective_ranks = 65536;
constexpr std::uint32_t max_collective_qps = 256;  // per connection
// Per-iteration and per-step lists in a results line: bounded so the line stays under 1 MiB.
constexpr std::size_t max_collective_entries = 40000;
constexpr std::string_view peer_fields[] = {
    "address", "gid", "qpn", "psn", "udp_sport", "mtu", "max_reads", "remote_address", "rkey"};
constexpr std::string_view connect_fields[] = {"peers"};
constexpr std::string_view start_fields[] = {"at_ns",          "seconds",           "iterations",
                                             "warmup_seconds", "warmup_iterations", "stats_ms"};
constexpr std::string_view hello_reply_fields[] = {
    "version", "protocol", "host", "providers", "workloads", "devices", "capture_backends"};
constexpr std::string_view capture_start_fields[] = {
    "backend",   "iface",     "dpdk_args",  "filter",    "snaplen",
    "write",     "seconds",   "ring_files", "ring_mb",   "buffer_mb",
    "link_gbps", "max_flows", "storm_ms",   "direction", "spine_macs"};
constexpr std::string_view direction_names[] = {"unknown", "leaf-to-spine", "spine-to-leaf"};
constexpr std::size_t max_spine_macs = 256;
constexpr std::string_view capture_started_fields[] = {"iface", "description", "speed_bps"};
constexpr std::string_view capture_summary_fields[] = {
    "stopped",  "backend", "iface",         "filter",         "snaplen",
    "start_ns", "end_ns",  "frames",        "dropped_buffer", "dropped_interface",
    "coverage", "files",   "files_deleted", "write_error",    "analysis"};
constexpr std::string_view capture_backend_names[] = {"pcap", "dpdk"};
constexpr std::string_view capture_filter_names[] = {"all", "roce", "cnp-pfc"};
constexpr std::size_t max_dpdk_args_chars = 2048;
constexpr std::size_t max_path_chars = 4096;
constexpr std::string_view device_fields[] = {"name", "provider", "addresses", "detail"};
constexpr std::string_view setup_reply_fields[] = {"endpoints"};
constexpr std::string_view started_fields[] = {"at_ns", "late_ns"};
constexpr std::string_view stats_fields[] = {"t_s", "messages", "bytes", "gbps"};
constexpr std::string_view results_fields[] = {
    "workload",       "role",   "stopped",     "seconds", "messages", "bytes",      "gbps",
    "messages_per_s", "errors", "first_error", "per_qp",  "latency",  "collective", "nics"};
constexpr std::string_view nic_fields[] = {"device", "port",  "netdev",  "seconds",
                                           "deltas", "reset", "problems"};
constexpr std::string_view qp_fields[] = {"qpn",  "udp_sport", "messages",     "bytes",
                                          "gbps", "counters",  "source_crc32", "target_crc32"};
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
constexpr std::string_view latency_fields[] = {"samples", "min_us",  "mean_us", "p50_us",
                                               "p99_us",  "p999_us", "max_us",  "histogram"};
constexpr std::string_view error_fields[] = {"error"};

constexpr std::string_view provider_names[] = {"soft", "verbs"};
constexpr std::string_view workload_names[] = {"bw", "lat", "collective"};  // Workload's order
constexpr std::string_view role_names[] = {"client", "server"};             // Role's order
constexpr std::string_view opcode_names[] = {"send", "write", "write_with_imm", "read"};
constexpr std::string_view transport_names[] = {"rc", "ud"};  // in traffic::QpType order
constexpr traffic::Opcode opcode_values[] = {traffic::Opcode::send, traffic::Opcode::write,
                                             traffic::Opcode::write_with_imm,
                                             traffic::Opcode::read};

// Thrown by the readers below and caught in parse_request/parse_reply, never beyond: a message
// stops at its first problem, and unwinding spares threading a status through every nested
// reader. Not a std::exception, so no catch-all elsewhere can mistake it for a library error.
struct Rejected {
  std::string message;
};

[[noreturn]] void reject(std::string message) {
  throw Rejected{std::move(message)};
}

bool contains(std::span<const std::string_view> names, std::string_view name) {
  for (auto n : names)
    if (n == name) return true;
  return false;
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// `"a" or "b"`, `one of "a", "b" or "c"`.
std::string one_of(std::span<const std::string_view> names) {
  std::string out = names.size() > 2 ? "one of " : "";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += fmt::format("\"{}\"", names[i]);
  }
  return out;
}

// Appends bytes as printable ASCII: what a hostile line makes us repeat must not break the error
// onto a second line, move a terminal's cursor or carry broken UTF-8 into the reply. `also`
// names printable characters that get a backslash too (the surrounding quote).
void append_escaped(std::string& out, std::string_view bytes, std::string_view also) {
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      if (also.find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
}

// A received text in quotes, cut to max_echo_bytes and escaped.
std::string quote_text(std::string_view text, char quote) {
  std::string out(1, quote);
  append_escaped(out, text.substr(0, max_echo_bytes), quote == '"' ? "\"\\" : "'\\");
  if (text.size() > max_echo_bytes) out += "...";
  out += quote;
  return out;
}

// A received value as an error repeats it after "got".
std::string echo(const json& value) {
  switch (value.type()) {
    case json::value_t::string: return quote_text(value.get_ref<const std::string&>(), '"');
    case json::value_t::array:
      return fmt::format("an array of {} entr{}", value.size(), value.size() == 1 ? "y" : "ies");
    case json::value_t::object: return "an object";
    default: return value.dump();  // a number, true, false or null: short, one line
  }
}

// A JSON integer as uint64, or nothing (a float, a negative, not a number). "-0" is an integer
// that nlohmann stores signed.
std::optional<std::uint64_t> as_u64(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(value.get<std::int64_t>());
  return std::nullopt;
}

class Object;

// One received value and its name in messages: "field 'qps'" at the top level, else its path
// ("peers[2].gid"). The readers return the value or reject the line naming the field.
class Value {
 public:
  Value(const json& value, std::string_view op, std::string path)
      : value_(value), op_(op), path_(std::move(path)) {}

  const json& raw() const { return value_; }
  std::string label() const {
    if (path_.find_first_of(".[") == std::string::npos) return fmt::format("field '{}'", path_);
    return path_;
  }
  [[noreturn]] void fail(std::string_view requirement) const {
    reject(fmt::format("{}: {} {}, got {}", op_, label(), requirement, echo(value_)));
  }

  // An integer in [lo, hi]; a float is refused even when whole, so a sender's bug that turns
  // counts into doubles shows here rather than as a silently rounded value.
  template <class T>
  T integer(std::int64_t lo, std::uint64_t hi, std::string_view requirement = {}) const {
    bool ok = false;
    if (value_.is_number_unsigned()) {
      const auto u = value_.get<std::uint64_t>();
      ok = u <= hi && (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
    } else if (value_.is_number_integer()) {
      const auto s = value_.get<std::int64_t>();
      ok = s >= lo && (s < 0 || static_cast<std::uint64_t>(s) <= hi);
    }
    if (!ok) {
      if (requirement.empty()) fail(fmt::format("must be an integer from {} to {}", lo, hi));
      fail(requirement);
    }
    if constexpr (std::is_signed_v<T>) {
      return static_cast<T>(value_.get<std::int64_t>());
    } else {
      return static_cast<T>(value_.get<std::uint64_t>());
    }
  }

  // A number in [lo, hi], or (lo, hi] when `above_lo`.
  double number(double lo, bool above_lo, double hi) const {
    const double d = value_.is_number() ? value_.get<double>() : 0;
    if (!value_.is_number() || !std::isfinite(d) || (above_lo ? d <= lo : d < lo) || d > hi) {
      fail(above_lo ? fmt::format("must be a number above {} and at most {}", lo, hi)
                    : fmt::format("must be a number from {} to {}", lo, hi));
    }
    return d;
  }

  // Any finite number. A sender's NaN or infinity reaches us as null (JSON has neither).
  double finite() const {
    const double d = value_.is_number() ? value_.get<double>() : 0;
    if (!value_.is_number() || !std::isfinite(d)) fail("must be a finite number");
    return d;
  }

  bool boolean() const {
    if (!value_.is_boolean()) fail("must be true or false");
    return value_.get<bool>();
  }

  const std::string& string() const {
    if (!value_.is_string()) fail("must be a string");
    return value_.get_ref<const std::string&>();
  }

  // The index of the value in `names`.
  std::size_t choice(std::span<const std::string_view> names) const {
    if (value_.is_string()) {
      const auto& s = value_.get_ref<const std::string&>();
      for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == s) return i;
    }
    fail(fmt::format("must be {}", one_of(names)));
  }

  // An array's length, checked against [lo, hi] before its entries are read, so a huge hostile
  // array costs one comparison.
  std::size_t array(std::size_t lo = 0, std::size_t hi = std::numeric_limits<std::size_t>::max(),
                    std::string_view why = {}) const {
    if (!value_.is_array()) fail("must be an array");
    const std::size_t n = value_.size();
    if (n < lo || n > hi)
      reject(
          fmt::format("{}: {} must have {} to {} entries{}, got {}", op_, label(), lo, hi, why, n));
    return n;
  }
  Value at(std::size_t i) const { return {value_[i], op_, fmt::format("{}[{}]", path_, i)}; }

  Object object(bool all_required) const;

 private:
  const json& value_;
  std::string_view op_;
  std::string path_;
};

// A JSON object being read: refuses unknown keys and, for replies (`all_required`), missing ones.
class Object {
 public:
  Object(const json& object, std::string_view op, std::string path, bool all_required)
      : object_(object), op_(op), path_(std::move(path)), all_required_(all_required) {}

  // Refuses any key outside `known` (and, at the top level, the envelope's v, op and id). A typo
  // must not pass as "field absent, default used".
  void only(std::span<const std::string_view> known) const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      const std::string& key = it.key();
      if ((path_.empty() && contains(envelope_fields, key)) || contains(known, key)) continue;
      reject(fmt::format("{}: {}unknown field {} ({})", op_, where(), quote_text(key, '\''),
                         known.empty() ? fmt::format("{} takes no fields besides v, op and id", op_)
                                       : fmt::format("known: {}", join(known))));
    }
  }

  // The field if present; absent is an error when every field is required.
  std::optional<Value> get(std::string_view key) const {
    auto v = optional(key);
    if (!v && all_required_) missing(key);
    return v;
  }
  // The field if present, whatever all_required says.
  std::optional<Value> optional(std::string_view key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) return std::nullopt;
    return Value(*it, op_, path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
  }
  Value need(std::string_view key) const {
    auto v = optional(key);
    if (!v) missing(key);
    return *v;
  }

  // Readers that leave `out` (its default) alone when the field is absent and allowed to be.
  template <class T>
  void integer(std::string_view key, T& out, std::int64_t lo, std::uint64_t hi) const {
    if (auto v = get(key)) out = v->integer<T>(lo, hi);
  }
  void finite(std::string_view key, double& out) const {
    if (auto v = get(key)) out = v->finite();
  }
  void boolean(std::string_view key, bool& out) const {
    if (auto v = get(key)) out = v->boolean();
  }
  void string(std::string_view key, std::string& out) const {
    if (auto v = get(key)) out = v->string();
  }

 private:
  std::string where() const { return path_.empty() ? std::string() : path_ + ": "; }
  [[noreturn]] void missing(std::string_view key) const {
    reject(fmt::format("{}: {}missing required field '{}'", op_, where(), key));
  }

  const json& object_;
  std::string_view op_;
  std::string path_;
  bool all_required_;
};

Object Value::object(bool all_required) const {
  if (!value_.is_object()) fail("must be an object");
  return {value_, op_, path_, all_required};
}

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

// ---- the envelope ----

// Rejects what no message can be, before nlohmann sees it: an over-long line (the agent must
// not buffer without bound), NUL bytes (nlohmann stops at one as if the input ended, so
// `{...}\0junk` would pass) and nesting beyond max_json_depth.
void prescan(std::string_view line) {
  if (line.size() > max_agent_line_bytes)
    reject(fmt::format(
        "line of {} bytes is over the limit of {}: each message is one JSON object on one line",
        line.size(), max_agent_line_bytes));
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\0')
      reject(fmt::format("not valid JSON at column {}: a NUL byte (JSON text has none)", i + 1));
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth)
        reject(fmt::format(
            "JSON nested deeper than {} levels at column {}: no agent protocol message nests "
            "that deep",
            max_json_depth, i + 1));
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced input goes negative; the parser refuses it
    }
  }
}

// Collects nlohmann's description of a syntax error: json::parse without exceptions only says
// that it failed. Runs on the failure path only.
class SyntaxError : public nlohmann::json_sax<json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& ex) override {
    position_ = position;
    token_ = last_token;
    what_ = ex.what();
    return false;
  }

  // "not valid JSON at column 7: syntax error while parsing value - invalid literal; last read:
  // 'abc'", with the token (which can be the rest of the line) cut and escaped.
  std::string message() const {
    std::string text = what_;
    // Drop "[json.exception.parse_error.101] " and "parse error at line 1, column 7: ": the
    // column comes from position_, and the line is always 1.
    if (const auto p = text.find("] "); p != std::string::npos) text.erase(0, p + 2);
    if (text.starts_with("parse error at ")) {
      if (const auto p = text.find(": "); p != std::string::npos) text.erase(0, p + 2);
    }
    std::string out = fmt::format("not valid JSON at column {}: ", position_);
    const std::string token = "'" + token_ + "'";
    const auto t = text.find(token);
    if (t == std::string::npos) {
      append_escaped(out, text, "");
    } else {
      append_escaped(out, std::string_view(text).substr(0, t), "");
      out += quote_text(token_, '\'');
      append_escaped(out, std::string_view(text).substr(t + token.size()), "");
    }
    return out;
  }

 private:
  std::size_t position_ = 0;
  std::string token_;
  std::string what_ = "not valid JSON";
};

// The line as a JSON object, or a rejection.
json parse_object(std::string_view line) {
  prescan(line);
  json doc = json::parse(line.data(), line.data() + line.size(), nullptr,
                         /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    if (line.find_first_not_of(" \t\r\n") == std::string_view::npos)
      reject("empty line: expected one JSON object");
    SyntaxError sax;
    json::sax_parse(line.data(), line.data() + line.size(), &sax);
    reject(sax.message());
  }
  if (!doc.is_object()) reject(fmt::format("expected a JSON object, got {}", echo(doc)));
  return doc;
}

// Checks v and op, reads id; returns the op's index in `ops`. `id` is set as soon as a valid id
// is seen, before any check can reject the line, so even a refusal can carry it back.
std::size_t read_envelope(const json& doc, std::span<const std::string_view> ops,
                          std::string_view side, std::optional<std::uint64_t>& id) {
  const auto id_it = doc.find("id");
  if (id_it != doc.end()) id = as_u64(*id_it);

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
  return index;
}

// ---- requests ----

PeerEndpoint read_peer(const Value& v, bool all_required) {
  const Object o = v.object(all_required);
  o.only(peer_fields);
  PeerEndpoint p;
  p.endpoint.address = ip_address(o.need("address"));
  if (auto g = o.get("gid")) p.endpoint.gid = gid(*g);
  p.endpoint.qpn = o.need("qpn").integer<std::uint32_t>(1, max_qpn);
  o.integer("psn", p.endpoint.psn, 0, max_qpn);
  o.integer("udp_sport", p.endpoint.udp_sport, 0, max_u16);
  if (auto m = o.get("mtu")) p.endpoint.mtu = mtu(*m);
  o.integer("max_reads", p.endpoint.max_reads, 0, max_u8);
  o.integer("remote_address", p.remote_address, 0, max_u64);
  o.integer("rkey", p.rkey, 0, max_u32);
  return p;
}

std::vector<PeerEndpoint> read_peers(const Value& v, bool all_required) {
  const std::size_t n = v.array(1, max_agent_qps, " (one per QP)");
  std::vector<PeerEndpoint> peers;
  peers.reserve(n);
  for (std::size_t i = 0; i < n; ++i) peers.push_back(read_peer(v.at(i), all_required));
  return peers;
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

CollectiveSetup read_collective_setup(const Value& v) {
  const Object o = v.object(false);
  o.only(collective_setup_fields);
  CollectiveSetup c;
  c.pattern = pattern_names()[o.need("pattern").choice(pattern_names())];
  c.ranks = o.need("ranks").integer<std::uint32_t>(2, max_collective_ranks);
  c.rank = o.need("rank").integer<std::uint32_t>(0, c.ranks - 1);
  if (auto r = o.get("ranks_per_host")) {
    c.ranks_per_host = r->integer<std::uint32_t>(1, c.ranks);
    if (c.ranks % c.ranks_per_host != 0) r->fail(fmt::format("must divide ranks ({})", c.ranks));
  }
  o.integer("pipeline", c.pipeline, 1, 1024);
  o.integer("seed", c.seed, 0, max_u64);
  if (auto r = o.get("strategy")) c.strategy = strategy_names[r->choice(strategy_names)];
  o.integer("sport_seed", c.sport_seed, 0, max_u64);
  return c;
}

SetupRequest read_setup(const Object& o) {
  o.only(setup_fields);
  SetupRequest s;
  if (auto v = o.get("provider")) s.provider = provider_names[v->choice(provider_names)];
  if (auto v = o.get("device")) s.device = device_name(*v);
  o.integer("port", s.port, 1, 255);
  o.integer("gid_index", s.gid_index, -1, 255);
  s.address = ip_address(o.need("address"));
  if (auto v = o.get("workload")) s.workload = static_cast<Workload>(v->choice(workload_names));
  if (auto v = o.get("role")) s.role = static_cast<Role>(v->choice(role_names));
  const auto opcode = o.get("opcode");
  if (opcode) s.opcode = opcode_values[opcode->choice(opcode_names)];
  o.integer("qps", s.qps, 1, max_agent_qps);
  o.integer("message_bytes", s.message_bytes, 1, std::uint64_t{1} << 30);
  o.integer("tx_depth", s.tx_depth, 1, 4096);
  if (auto v = o.get("mtu")) s.mtu = mtu(*v);
  o.integer("traffic_class", s.traffic_class, 0, 255);
  if (auto v = o.get("udp_sports")) {
    const std::size_t n = v->array();
    if (n != 0 && n != s.qps)
      reject(fmt::format(
          "setup: field 'udp_sports' has {} entries but qps is {}: give one port per QP, or none",
          n, s.qps));
    for (std::size_t i = 0; i < n; ++i)
      s.udp_sports.push_back(v->at(i).integer<std::uint16_t>(1, max_u16));
  }
  o.boolean("bidirectional", s.bidirectional);
  const auto transport = o.get("transport");
  if (transport) s.transport = static_cast<traffic::QpType>(transport->choice(transport_names));
  o.integer("gpu", s.gpu, -1, 255);
  o.integer("retry_count", s.retry_count, 0, 7);
  o.integer("ack_timeout_us", s.ack_timeout_us, 1, 60'000'000);
  if (auto v = o.get("collective")) s.collective = read_collective_setup(*v);

  if (s.workload == Workload::collective) {
    if (!s.collective)
      reject("setup: workload \"collective\" needs field 'collective' (pattern, ranks, rank)");
    if (s.qps > max_collective_qps)
      reject(fmt::format("setup: a collective takes at most {} qps per connection, got {}",
                         max_collective_qps, s.qps));
    if (opcode) reject("setup: a collective moves its data with write_with_imm: drop 'opcode'");
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
    if (opcode && s.opcode != traffic::Opcode::send)
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
  const std::uint64_t total = std::uint64_t{s.qps} * s.message_bytes;
  if (total > max_setup_buffer_bytes)
    reject(fmt::format(
        "setup: qps * message_bytes must be at most 4 GiB ({}), got {} * {} = {}: use fewer QPs "
        "or smaller messages",
        max_setup_buffer_bytes, s.qps, s.message_bytes, total));
  return s;
}

StartRequest read_start(const Object& o) {
  o.only(start_fields);
  StartRequest s;
  o.integer("at_ns", s.at_ns, 0, max_i64);
  if (auto v = o.get("seconds")) s.seconds = v->number(0, /*above_lo=*/true, 86400);
  o.integer("iterations", s.iterations, 0, 1'000'000'000'000);
  if (auto v = o.get("warmup_seconds")) s.warmup_seconds = v->number(0, false, 3600);
  o.integer("warmup_iterations", s.warmup_iterations, 0, 1'000'000'000);
  if (auto v = o.get("stats_ms")) {
    constexpr std::string_view requirement =
        "must be 0 (no stats) or an integer from 10 to 3600000";
    s.stats_ms = v->integer<std::uint32_t>(0, 3'600'000, requirement);
    if (s.stats_ms != 0 && s.stats_ms < 10) v->fail(requirement);
  }
  return s;
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

CaptureStartRequest read_capture_start(const Object& o) {
  o.only(capture_start_fields);
  CaptureStartRequest c;
  if (auto v = o.get("backend"))
    c.backend = capture_backend_names[v->choice(capture_backend_names)];
  if (auto v = o.get("iface")) c.iface = interface_name(*v);
  if (auto v = o.get("dpdk_args")) c.dpdk_args = printable(*v, max_dpdk_args_chars, true);
  if (auto v = o.get("filter")) c.filter = capture_filter_names[v->choice(capture_filter_names)];
  o.integer("snaplen", c.snaplen, 64, 262144);
  if (auto v = o.get("write")) c.write = printable(*v, max_path_chars, true);
  if (auto v = o.get("seconds")) c.seconds = v->number(0, false, 86400);
  o.integer("ring_files", c.ring_files, 0, 100000);
  o.integer("ring_mb", c.ring_mb, 0, 1u << 20);
  o.integer("buffer_mb", c.buffer_mb, 1, 1024);
  if (auto v = o.get("link_gbps")) c.link_gbps = v->number(0, false, 10000);
  o.integer("max_flows", c.max_flows, 0, 100000);
  if (auto v = o.get("storm_ms")) c.storm_ms = v->number(0, /*above_lo=*/true, 3'600'000);
  if (auto v = o.get("direction")) c.direction = direction_names[v->choice(direction_names)];
  if (auto v = o.get("spine_macs")) {
    const std::size_t n = v->array(0, max_spine_macs);
    for (std::size_t i = 0; i < n; ++i) c.spine_macs.push_back(mac_address(v->at(i)));
  }
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
  return c;
}

RequestBody read_request_body(std::size_t op, const Object& o) {
  switch (op) {
    case 0: o.only({}); return HelloRequest{};
    case 1: return read_setup(o);
    case 2: {
      o.only(connect_fields);
      return ConnectRequest{read_peers(o.need("peers"), false)};
    }
    case 3: return read_start(o);
    case 4: o.only({}); return StopRequest{};
    case 5: return read_capture_start(o);
    default: o.only({}); return CaptureStopRequest{};
  }
}

// ---- replies ----

std::vector<std::string> read_strings(const Value& v) {
  const std::size_t n = v.array();
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(v.at(i).string());
  return out;
}

HelloReply read_hello_reply(const Object& o) {
  o.only(hello_reply_fields);
  HelloReply h;
  if (auto v = o.get("capture_backends")) {
    const std::size_t n = v->array(0, std::size(capture_backend_names));
    for (std::size_t i = 0; i < n; ++i)
      h.capture_backends.emplace_back(
          capture_backend_names[v->at(i).choice(capture_backend_names)]);
  }
  o.string("version", h.version);
  o.integer("protocol", h.protocol, 0, INT_MAX);
  o.string("host", h.host);
  h.providers = read_strings(o.need("providers"));
  h.workloads = read_strings(o.need("workloads"));
  const Value devices = o.need("devices");
  const std::size_t n = devices.array();
  for (std::size_t i = 0; i < n; ++i) {
    const Object d = devices.at(i).object(true);
    d.only(device_fields);
    DeviceEntry& e = h.devices.emplace_back();
    d.string("name", e.name);
    d.string("provider", e.provider);
    e.addresses = read_strings(d.need("addresses"));
    d.string("detail", e.detail);
  }
  return h;
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

LatencySummary read_latency(const Value& v) {
  const Object o = v.object(true);
  o.only(latency_fields);
  LatencySummary l;
  o.integer("samples", l.samples, 0, max_u64);
  o.finite("min_us", l.min_us);
  o.finite("mean_us", l.mean_us);
  o.finite("p50_us", l.p50_us);
  o.finite("p99_us", l.p99_us);
  o.finite("p999_us", l.p999_us);
  o.finite("max_us", l.max_us);
  const Value histogram = o.need("histogram");
  const std::size_t n = histogram.array();
  l.histogram.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Value bucket = histogram.at(i);
    if (!bucket.raw().is_array() || bucket.raw().size() != 2)
      bucket.fail("must be a pair [upper_us, count]");
    l.histogram.push_back({bucket.at(0).finite(), bucket.at(1).integer<std::uint64_t>(0, max_u64)});
  }
  return l;
}

template <class T>
std::vector<T> read_integers(const Value& v, std::int64_t lo, std::uint64_t hi) {
  const std::size_t n = v.array(0, max_collective_entries);
  std::vector<T> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(v.at(i).integer<T>(lo, hi));
  return out;
}

CollectiveReport read_collective_report(const Value& v) {
  const Object o = v.object(false);
  o.only(collective_report_fields);
  CollectiveReport c;
  c.iterations = o.need("iterations").integer<std::uint64_t>(0, max_u64);
  c.start_ns = o.need("start_ns").integer<std::int64_t>(0, max_i64);
  c.iteration_end_ns = read_integers<std::int64_t>(o.need("iteration_end_ns"), 0, max_i64);
  c.wait_ns = read_integers<std::uint64_t>(o.need("wait_ns"), 0, max_u64);
  c.step_ns = read_integers<std::uint64_t>(o.need("step_ns"), 0, max_u64);
  c.bytes_sent = o.need("bytes_sent").integer<std::uint64_t>(0, max_u64);
  c.bytes_received = o.need("bytes_received").integer<std::uint64_t>(0, max_u64);
  if (auto crc = o.optional("output_crc32"))
    c.output_crc32 = crc->integer<std::uint32_t>(0, max_u32);
  if (c.iteration_end_ns.size() != c.iterations)
    reject(fmt::format("results: collective.iteration_end_ns has {} entries for {} iterations",
                       c.iteration_end_ns.size(), c.iterations));
  if (c.wait_ns.size() != c.step_ns.size())
    reject(fmt::format("results: collective.wait_ns has {} steps but step_ns {}", c.wait_ns.size(),
                       c.step_ns.size()));
  return c;
}

std::vector<std::string> read_texts(const Value& v, std::size_t max_entries,
                                    std::size_t max_chars) {
  const std::size_t n = v.array(0, max_entries);
  std::vector<std::string> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(printable(v.at(i), max_chars, false));
  return out;
}

traffic::NicCounterDelta read_nic(const Value& v) {
  const Object o = v.object(false);
  o.only(nic_fields);
  traffic::NicCounterDelta d;
  if (auto f = o.get("device")) d.nic.rdma_device = printable(*f, 64, true);
  o.integer("port", d.nic.port, 1, 255);
  if (auto f = o.get("netdev")) d.nic.netdev = printable(*f, 64, true);
  o.finite("seconds", d.seconds);
  const Value deltas = o.need("deltas");
  if (!deltas.raw().is_object()) deltas.fail("must be an object of counter deltas");
  if (deltas.raw().size() > max_nic_counters)
    deltas.fail(fmt::format("must have at most {} counters", max_nic_counters));
  for (const auto& [key, value] : deltas.raw().items()) {
    const json key_text = key;  // Value keeps a reference: the json must outlive it
    const Value name(key_text, "results", deltas.label() + " key");
    const std::string counter = printable(name, 128, false);
    if (counter.find('/') == std::string::npos)
      name.fail("must be SOURCE/NAME (hw_counters/np_cnp_sent)");
    d.deltas[counter] = Value(value, "results", fmt::format("{}.{}", deltas.label(), counter))
                            .integer<std::uint64_t>(0, max_u64);
  }
  if (auto f = o.get("reset")) d.reset = read_texts(*f, max_nic_counters, 128);
  if (auto f = o.get("problems")) d.problems = read_texts(*f, 64, 1000);
  return d;
}

ResultsEvent read_results(const Object& o) {
  o.only(results_fields);
  ResultsEvent r;
  r.workload = static_cast<Workload>(o.need("workload").choice(workload_names));
  r.role = static_cast<Role>(o.need("role").choice(role_names));
  o.boolean("stopped", r.stopped);
  o.finite("seconds", r.seconds);
  o.integer("messages", r.messages, 0, max_u64);
  o.integer("bytes", r.bytes, 0, max_u64);
  o.finite("gbps", r.gbps);
  o.finite("messages_per_s", r.messages_per_s);
  o.integer("errors", r.errors, 0, max_u64);
  o.string("first_error", r.first_error);
  const Value per_qp = o.need("per_qp");
  const std::size_t n = per_qp.array(0, max_agent_qps, " (one per QP)");
  r.per_qp.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Object q = per_qp.at(i).object(true);
    q.only(qp_fields);
    QpResult& qp = r.per_qp.emplace_back();
    q.integer("qpn", qp.qpn, 0, max_qpn);
    q.integer("udp_sport", qp.udp_sport, 0, max_u16);
    q.integer("messages", qp.messages, 0, max_u64);
    q.integer("bytes", qp.bytes, 0, max_u64);
    q.finite("gbps", qp.gbps);
    qp.counters = read_counters(q.need("counters"));
    // Optional like latency: present once the run has ended on a buffer in host memory.
    if (auto v = q.optional("source_crc32"))
      qp.source_crc32 = v->integer<std::uint32_t>(0, max_u32);
    if (auto v = q.optional("target_crc32"))
      qp.target_crc32 = v->integer<std::uint32_t>(0, max_u32);
  }
  // The optional fields of a reply: only lat has a latency summary, only a collective its report.
  if (auto v = o.optional("latency")) r.latency = read_latency(*v);
  if (auto v = o.optional("collective")) r.collective = read_collective_report(*v);
  if (auto v = o.optional("nics")) {
    const std::size_t nic_count = v->array(0, max_agent_nics);
    for (std::size_t i = 0; i < nic_count; ++i) r.nics.push_back(read_nic(v->at(i)));
  }
  return r;
}

CaptureSummaryEvent read_capture_summary(const Object& o) {
  o.only(capture_summary_fields);
  CaptureSummaryEvent c;
  o.boolean("stopped", c.stopped);
  if (auto v = o.get("backend"))
    c.backend = capture_backend_names[v->choice(capture_backend_names)];
  o.string("iface", c.iface);
  if (auto v = o.get("filter")) c.filter = capture_filter_names[v->choice(capture_filter_names)];
  o.integer("snaplen", c.snaplen, 0, max_u32);
  o.integer("start_ns", c.start_ns, 0, max_u64);
  o.integer("end_ns", c.end_ns, 0, max_u64);
  o.integer("frames", c.frames, 0, max_u64);
  o.integer("dropped_buffer", c.dropped_buffer, 0, max_u64);
  o.integer("dropped_interface", c.dropped_interface, 0, max_u64);
  if (auto v = o.get("coverage")) c.coverage = v->number(0, false, 1);
  if (auto v = o.get("files")) c.files = read_strings(*v);
  o.integer("files_deleted", c.files_deleted, 0, max_u64);
  o.string("write_error", c.write_error);
  const Value analysis = o.need("analysis");
  const Object a = analysis.object(false);
  const Value version = a.need("schema_version");
  if (version.integer<int>(0, 1000) != 1)
    version.fail("must be 1 (the analysis schema this controller reads)");
  c.analysis_json = analysis.raw().dump(-1, ' ', false, json::error_handler_t::replace);
  return c;
}

ReplyBody read_reply_body(std::size_t op, const Object& o) {
  switch (op) {
    case 0: return read_hello_reply(o);
    case 1: {
      o.only(setup_reply_fields);
      return SetupReply{read_peers(o.need("endpoints"), true)};
    }
    case 2: o.only({}); return ConnectedReply{};
    case 3: {
      o.only(started_fields);
      StartedReply s;
      o.integer("at_ns", s.at_ns, 0, max_i64);
      o.integer("late_ns", s.late_ns, 0, max_i64);
      return s;
    }
    case 4: {
      o.only(stats_fields);
      StatsEvent s;
      o.finite("t_s", s.t_s);
      o.integer("messages", s.messages, 0, max_u64);
      o.integer("bytes", s.bytes, 0, max_u64);
      o.finite("gbps", s.gbps);
      return s;
    }
    case 5: return read_results(o);
    case 6: {
      o.only(error_fields);
      ErrorReply e;
      o.string("error", e.message);
      return e;
    }
    case 7: {
      o.only(capture_started_fields);
      CaptureStartedReply c;
      o.string("iface", c.iface);
      o.string("description", c.description);
      o.integer("speed_bps", c.speed_bps, 0, max_u64);
      return c;
    }
    default: return read_capture_summary(o);
  }
}

// ---- writing ----

ordered peer_json(const PeerEndpoint& p) {
  ordered j;
  j["address"] = p.endpoint.address;
  j["gid"] = p.endpoint.gid;
  j["qpn"] = p.endpoint.qpn;
  j["psn"] = p.endpoint.psn;
  j["udp_sport"] = p.endpoint.udp_sport;
  j["mtu"] = p.endpoint.mtu;
  j["max_reads"] = p.endpoint.max_reads;
  j["remote_address"] = p.remote_address;
  j["rkey"] = p.rkey;
  return j;
}

ordered peers_json(const std::vector<PeerEndpoint>& peers) {
  ordered j = ordered::array();
  for (const auto& p : peers) j.push_back(peer_json(p));
  return j;
}

void put(ordered&, const HelloRequest&) {}
void put(ordered& j, const SetupRequest& s) {
  j["provider"] = s.provider;
  j["device"] = s.device;
  j["port"] = s.port;
  j["gid_index"] = s.gid_index;
  j["address"] = s.address;
  j["workload"] = std::string(to_string(s.workload));
  j["role"] = std::string(to_string(s.role));
  // A collective always writes with immediate, and says so by not naming an opcode.
  if (s.workload != Workload::collective) j["opcode"] = std::string(traffic::to_string(s.opcode));
  j["qps"] = s.qps;
  j["message_bytes"] = s.message_bytes;
  j["tx_depth"] = s.tx_depth;
  j["mtu"] = s.mtu;
  j["traffic_class"] = s.traffic_class;
  j["udp_sports"] = s.udp_sports;
  j["bidirectional"] = s.bidirectional;
  j["transport"] = std::string(transport_names[static_cast<std::size_t>(s.transport)]);
  j["gpu"] = s.gpu;
  j["retry_count"] = s.retry_count;
  j["ack_timeout_us"] = s.ack_timeout_us;
  if (s.collective) {
    const CollectiveSetup& c = *s.collective;
    ordered o;
    o["pattern"] = c.pattern;
    o["ranks"] = c.ranks;
    o["rank"] = c.rank;
    o["ranks_per_host"] = c.ranks_per_host;
    o["pipeline"] = c.pipeline;
    o["seed"] = c.seed;
    o["strategy"] = c.strategy;
    o["sport_seed"] = c.sport_seed;
    j["collective"] = std::move(o);
  }
}
void put(ordered& j, const ConnectRequest& c) {
  j["peers"] = peers_json(c.peers);
}
void put(ordered& j, const StartRequest& s) {
  j["at_ns"] = s.at_ns;
  j["seconds"] = s.seconds;
  j["iterations"] = s.iterations;
  j["warmup_seconds"] = s.warmup_seconds;
  j["warmup_iterations"] = s.warmup_iterations;
  j["stats_ms"] = s.stats_ms;
}
void put(ordered&, const StopRequest&) {}
void put(ordered& j, const CaptureStartRequest& c) {
  j["backend"] = c.backend;
  j["iface"] = c.iface;
  j["dpdk_args"] = c.dpdk_args;
  j["filter"] = c.filter;
  j["snaplen"] = c.snaplen;
  j["write"] = c.write;
  j["seconds"] = c.seconds;
  j["ring_files"] = c.ring_files;
  j["ring_mb"] = c.ring_mb;
  j["buffer_mb"] = c.buffer_mb;
  j["link_gbps"] = c.link_gbps;
  j["max_flows"] = c.max_flows;
  j["storm_ms"] = c.storm_ms;
  j["direction"] = c.direction;
  j["spine_macs"] = c.spine_macs;
}
void put(ordered&, const CaptureStopRequest&) {}
void put(ordered& j, const CaptureStartedReply& c) {
  j["iface"] = c.iface;
  j["description"] = c.description;
  j["speed_bps"] = c.speed_bps;
}
void put(ordered& j, const CaptureSummaryEvent& c) {
  j["stopped"] = c.stopped;
  j["backend"] = c.backend;
  j["iface"] = c.iface;
  j["filter"] = c.filter;
  j["snaplen"] = c.snaplen;
  j["start_ns"] = c.start_ns;
  j["end_ns"] = c.end_ns;
  j["frames"] = c.frames;
  j["dropped_buffer"] = c.dropped_buffer;
  j["dropped_interface"] = c.dropped_interface;
  j["coverage"] = c.coverage;
  j["files"] = c.files;
  j["files_deleted"] = c.files_deleted;
  j["write_error"] = c.write_error;
  // Text that is not one JSON object (a bug on our side) is sent as an empty analysis, which the
  // controller refuses by its missing schema_version rather than by a parse error mid-line.
  ordered analysis = ordered::parse(c.analysis_json, nullptr, false);
  j["analysis"] = analysis.is_object() ? std::move(analysis) : ordered::object();
}

void put(ordered& j, const HelloReply& h) {
  j["version"] = h.version;
  j["protocol"] = h.protocol;
  j["host"] = h.host;
  j["providers"] = h.providers;
  j["workloads"] = h.workloads;
  ordered devices = ordered::array();
  for (const auto& d : h.devices) {
    ordered e;
    e["name"] = d.name;
    e["provider"] = d.provider;
    e["addresses"] = d.addresses;
    e["detail"] = d.detail;
    devices.push_back(std::move(e));
  }
  j["devices"] = std::move(devices);
  j["capture_backends"] = h.capture_backends;
}
void put(ordered& j, const SetupReply& s) {
  j["endpoints"] = peers_json(s.endpoints);
}
void put(ordered&, const ConnectedReply&) {}
void put(ordered& j, const StartedReply& s) {
  j["at_ns"] = s.at_ns;
  j["late_ns"] = s.late_ns;
}
void put(ordered& j, const StatsEvent& s) {
  j["t_s"] = s.t_s;
  j["messages"] = s.messages;
  j["bytes"] = s.bytes;
  j["gbps"] = s.gbps;
}
void put(ordered& j, const ResultsEvent& r) {
  j["workload"] = std::string(to_string(r.workload));
  j["role"] = std::string(to_string(r.role));
  j["stopped"] = r.stopped;
  j["seconds"] = r.seconds;
  j["messages"] = r.messages;
  j["bytes"] = r.bytes;
  j["gbps"] = r.gbps;
  j["messages_per_s"] = r.messages_per_s;
  j["errors"] = r.errors;
  j["first_error"] = r.first_error;
  ordered per_qp = ordered::array();
  for (const auto& q : r.per_qp) {
    ordered e;
    e["qpn"] = q.qpn;
    e["udp_sport"] = q.udp_sport;
    e["messages"] = q.messages;
    e["bytes"] = q.bytes;
    e["gbps"] = q.gbps;
    e["counters"] = qp_counters_json(q.counters);
    if (q.source_crc32) e["source_crc32"] = *q.source_crc32;
    if (q.target_crc32) e["target_crc32"] = *q.target_crc32;
    per_qp.push_back(std::move(e));
  }
  j["per_qp"] = std::move(per_qp);
  if (r.latency) {
    const LatencySummary& l = *r.latency;
    ordered lat;
    lat["samples"] = l.samples;
    lat["min_us"] = l.min_us;
    lat["mean_us"] = l.mean_us;
    lat["p50_us"] = l.p50_us;
    lat["p99_us"] = l.p99_us;
    lat["p999_us"] = l.p999_us;
    lat["max_us"] = l.max_us;
    ordered histogram = ordered::array();
    for (const auto& b : l.histogram) histogram.push_back(ordered::array({b.upper_us, b.count}));
    lat["histogram"] = std::move(histogram);
    j["latency"] = std::move(lat);
  }
  if (r.collective) {
    const CollectiveReport& c = *r.collective;
    ordered o;
    o["iterations"] = c.iterations;
    o["start_ns"] = c.start_ns;
    o["iteration_end_ns"] = c.iteration_end_ns;
    o["wait_ns"] = c.wait_ns;
    o["step_ns"] = c.step_ns;
    o["bytes_sent"] = c.bytes_sent;
    o["bytes_received"] = c.bytes_received;
    if (c.output_crc32) o["output_crc32"] = *c.output_crc32;
    j["collective"] = std::move(o);
  }
  if (!r.nics.empty()) {
    ordered nics = ordered::array();
    for (const traffic::NicCounterDelta& d : r.nics) {
      ordered n;
      n["device"] = d.nic.rdma_device;
      n["port"] = d.nic.port;
      n["netdev"] = d.nic.netdev;
      n["seconds"] = d.seconds;
      n["deltas"] = d.deltas;
      n["reset"] = d.reset;
      n["problems"] = d.problems;
      nics.push_back(std::move(n));
    }
    j["nics"] = std::move(nics);
  }
}
void put(ordered& j, const ErrorReply& e) {
  j["error"] = e.message;
}

template <class Message>
std::string write_line(const Message& message, std::span<const std::string_view> ops) {
  ordered j;
  j["v"] = agent_protocol_version;
  j["op"] = std::string(ops[message.body.index()]);
  if (message.id) j["id"] = *message.id;
  std::visit([&j](const auto& body) { put(j, body); }, message.body);
  // replace: a string with broken UTF-8 (a device's detail text, say) must not throw here.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string_view to_string(Workload workload) {
  const auto i = static_cast<std::size_t>(workload);
  return i < std::size(workload_names) ? workload_names[i] : "?";
}
std::string_view to_string(Role role) {
  const auto i = static_cast<std::size_t>(role);
  return i < std::size(role_names) ? role_names[i] : "?";
}

ParsedRequest parse_request(std::string_view line) {
  ParsedRequest out;
  try {
    const json doc = parse_object(line);
    Request request;
    const std::size_t op = read_envelope(doc, request_ops, "agent", out.id);
    request.id = out.id;
    request.body = read_request_body(op, Object(doc, request_ops[op], "", false));
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
    const std::size_t op = read_envelope(doc, reply_ops, "controller", reply.id);
    reply.body = read_reply_body(op, Object(doc, reply_ops[op], "", true));
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
