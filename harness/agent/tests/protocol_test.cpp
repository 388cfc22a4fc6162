#include "rocehil/agent/protocol.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace rocehil::agent {
namespace {

using traffic::Opcode;

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

// ---- field-by-field comparison (the structs have no operator==) ----

void expect_same(const PeerEndpoint& a, const PeerEndpoint& b) {
  EXPECT_EQ(a.endpoint.address, b.endpoint.address);
  EXPECT_EQ(a.endpoint.gid, b.endpoint.gid);
  EXPECT_EQ(a.endpoint.qpn, b.endpoint.qpn);
  EXPECT_EQ(a.endpoint.psn, b.endpoint.psn);
  EXPECT_EQ(a.endpoint.udp_sport, b.endpoint.udp_sport);
  EXPECT_EQ(a.endpoint.mtu, b.endpoint.mtu);
  EXPECT_EQ(a.endpoint.max_reads, b.endpoint.max_reads);
  EXPECT_EQ(a.remote_address, b.remote_address);
  EXPECT_EQ(a.rkey, b.rkey);
}

void expect_same(const std::vector<PeerEndpoint>& a, const std::vector<PeerEndpoint>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i]);
}

void expect_same(const SetupRequest& a, const SetupRequest& b) {
  EXPECT_EQ(a.provider, b.provider);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.port, b.port);
  EXPECT_EQ(a.gid_index, b.gid_index);
  EXPECT_EQ(a.address, b.address);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.opcode, b.opcode);
  EXPECT_EQ(a.qps, b.qps);
  EXPECT_EQ(a.message_bytes, b.message_bytes);
  EXPECT_EQ(a.tx_depth, b.tx_depth);
  EXPECT_EQ(a.mtu, b.mtu);
  EXPECT_EQ(a.traffic_class, b.traffic_class);
  EXPECT_EQ(a.sl, b.sl);
  EXPECT_EQ(a.udp_sports, b.udp_sports);
  EXPECT_EQ(a.traffic_classes, b.traffic_classes);
  EXPECT_EQ(a.bidirectional, b.bidirectional);
  EXPECT_EQ(a.transport, b.transport);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.retry_count, b.retry_count);
  EXPECT_EQ(a.ack_timeout_us, b.ack_timeout_us);
  EXPECT_EQ(a.link_gbps, b.link_gbps);
  ASSERT_EQ(a.collective.has_value(), b.collective.has_value());
  if (!a.collective) return;
  EXPECT_EQ(a.collective->pattern, b.collective->pattern);
  EXPECT_EQ(a.collective->ranks, b.collective->ranks);
  EXPECT_EQ(a.collective->rank, b.collective->rank);
  EXPECT_EQ(a.collective->ranks_per_host, b.collective->ranks_per_host);
  EXPECT_EQ(a.collective->pipeline, b.collective->pipeline);
  EXPECT_EQ(a.collective->seed, b.collective->seed);
  EXPECT_EQ(a.collective->strategy, b.collective->strategy);
  EXPECT_EQ(a.collective->sport_seed, b.collective->sport_seed);
}

void expect_same(const StartRequest& a, const StartRequest& b) {
  EXPECT_EQ(a.at_ns, b.at_ns);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.warmup_seconds, b.warmup_seconds);
  EXPECT_EQ(a.warmup_iterations, b.warmup_iterations);
  EXPECT_EQ(a.stats_ms, b.stats_ms);
  EXPECT_EQ(a.messages_per_qp, b.messages_per_qp);
}

void expect_same(const traffic::QpCounters& a, const traffic::QpCounters& b) {
  EXPECT_EQ(a.packets_sent, b.packets_sent);
  EXPECT_EQ(a.bytes_sent, b.bytes_sent);
  EXPECT_EQ(a.packets_received, b.packets_received);
  EXPECT_EQ(a.bytes_received, b.bytes_received);
  EXPECT_EQ(a.retransmitted_packets, b.retransmitted_packets);
  EXPECT_EQ(a.timeouts, b.timeouts);
  EXPECT_EQ(a.naks_sent, b.naks_sent);
  EXPECT_EQ(a.naks_received, b.naks_received);
  EXPECT_EQ(a.cnps_sent, b.cnps_sent);
  EXPECT_EQ(a.cnps_handled, b.cnps_handled);
  EXPECT_EQ(a.ce_received, b.ce_received);
  EXPECT_EQ(a.out_of_sequence, b.out_of_sequence);
  EXPECT_EQ(a.rate_cuts, b.rate_cuts);
  EXPECT_EQ(a.rate_gbps, b.rate_gbps);
}

void expect_same(const ResultsEvent& a, const ResultsEvent& b) {
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.stopped, b.stopped);
  EXPECT_EQ(a.seconds, b.seconds);
  EXPECT_EQ(a.messages, b.messages);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.gbps, b.gbps);
  EXPECT_EQ(a.messages_per_s, b.messages_per_s);
  EXPECT_EQ(a.errors, b.errors);
  EXPECT_EQ(a.first_error, b.first_error);
  EXPECT_EQ(a.first_error_status, b.first_error_status);
  EXPECT_EQ(a.gpu_registration, b.gpu_registration);
  EXPECT_TRUE(a.events == b.events);
  ASSERT_EQ(a.per_qp.size(), b.per_qp.size());
  for (std::size_t i = 0; i < a.per_qp.size(); ++i) {
    const QpResult& x = a.per_qp[i];
    const QpResult& y = b.per_qp[i];
    EXPECT_EQ(x.qpn, y.qpn);
    EXPECT_EQ(x.udp_sport, y.udp_sport);
    EXPECT_EQ(x.messages, y.messages);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.gbps, y.gbps);
    expect_same(x.counters, y.counters);
    EXPECT_EQ(x.source_crc32, y.source_crc32);
    EXPECT_EQ(x.target_crc32, y.target_crc32);
    EXPECT_EQ(x.traffic_class, y.traffic_class);
  }
  ASSERT_EQ(a.collective.has_value(), b.collective.has_value());
  if (a.collective) {
    EXPECT_EQ(a.collective->iterations, b.collective->iterations);
    EXPECT_EQ(a.collective->start_ns, b.collective->start_ns);
    EXPECT_EQ(a.collective->iteration_end_ns, b.collective->iteration_end_ns);
    EXPECT_EQ(a.collective->wait_ns, b.collective->wait_ns);
    EXPECT_EQ(a.collective->step_ns, b.collective->step_ns);
    EXPECT_EQ(a.collective->wait_total_ns, b.collective->wait_total_ns);
    EXPECT_EQ(a.collective->longest_wait_step, b.collective->longest_wait_step);
    EXPECT_EQ(a.collective->longest_wait_ns, b.collective->longest_wait_ns);
    EXPECT_EQ(a.collective->bytes_sent, b.collective->bytes_sent);
    EXPECT_EQ(a.collective->bytes_received, b.collective->bytes_received);
    EXPECT_EQ(a.collective->output_crc32, b.collective->output_crc32);
  }
  ASSERT_EQ(a.latency.has_value(), b.latency.has_value());
  if (!a.latency) return;
  const LatencySummary& x = *a.latency;
  const LatencySummary& y = *b.latency;
  EXPECT_EQ(x.samples, y.samples);
  EXPECT_EQ(x.min_us, y.min_us);
  EXPECT_EQ(x.mean_us, y.mean_us);
  EXPECT_EQ(x.p50_us, y.p50_us);
  EXPECT_EQ(x.p99_us, y.p99_us);
  EXPECT_EQ(x.p999_us, y.p999_us);
  EXPECT_EQ(x.max_us, y.max_us);
  ASSERT_EQ(x.histogram.size(), y.histogram.size());
  for (std::size_t i = 0; i < x.histogram.size(); ++i) {
    EXPECT_EQ(x.histogram[i].upper_us, y.histogram[i].upper_us);
    EXPECT_EQ(x.histogram[i].count, y.histogram[i].count);
  }
}

// ---- round trips ----

// Writes, parses and returns the body, failing the test when the line does not come back.
template <class Body>
Body request_round_trip(const Request& request) {
  const std::string line = to_json_line(request);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const ParsedRequest parsed = parse_request(line);
  EXPECT_EQ(parsed.error, "") << line;
  EXPECT_TRUE(parsed.request.has_value());
  if (!parsed.request) return {};
  EXPECT_EQ(parsed.id, request.id);
  EXPECT_EQ(parsed.request->id, request.id);
  const Body* body = std::get_if<Body>(&parsed.request->body);
  EXPECT_NE(body, nullptr) << line;
  // The line it writes back is the same: the round trip is stable.
  EXPECT_EQ(to_json_line(*parsed.request), line);
  return body ? *body : Body{};
}

template <class Body>
Body reply_round_trip(const Reply& reply) {
  const std::string line = to_json_line(reply);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const ParsedReply parsed = parse_reply(line);
  EXPECT_EQ(parsed.error, "") << line;
  EXPECT_TRUE(parsed.reply.has_value());
  if (!parsed.reply) return {};
  EXPECT_EQ(parsed.reply->id, reply.id);
  const Body* body = std::get_if<Body>(&parsed.reply->body);
  EXPECT_NE(body, nullptr) << line;
  EXPECT_EQ(to_json_line(*parsed.reply), line);
  return body ? *body : Body{};
}

PeerEndpoint peer(std::uint32_t qpn) {
  PeerEndpoint p;
  p.endpoint.address = qpn % 2 ? "192.0.2.10" : "2001:db8::a:1";
  p.endpoint.gid = "fe80000000000000020c29fffe1a2b3C";
  p.endpoint.qpn = qpn;
  p.endpoint.psn = 0x123456;
  p.endpoint.udp_sport = 61000;
  p.endpoint.mtu = 2048;
  p.endpoint.max_reads = 16;
  p.remote_address = 0xFFFF'FFFF'FFFF'FFF0;
  p.rkey = 0xDEADBEEF;
  return p;
}

TEST(AgentProtocolRoundTrip, HelloAndStopKeepTheirIds) {
  request_round_trip<HelloRequest>(Request{7, HelloRequest{}});
  request_round_trip<HelloRequest>(Request{u64_max, HelloRequest{}});
  request_round_trip<StopRequest>(Request{0, StopRequest{}});
  request_round_trip<StopRequest>(Request{std::nullopt, StopRequest{}});
}

// A connection that carries several sessions (an agent that dialed home) names each line's
// session; session 0, stdio's only one, is absent on the wire.
TEST(AgentProtocolRoundTrip, SessionsAndTheirEnd) {
  EXPECT_EQ(to_json_line(Request{3, HelloRequest{}, 0}), R"({"v":1,"op":"hello","id":3})");
  EXPECT_EQ(to_json_line(Request{3, EndRequest{}, 17}),
            R"({"v":1,"op":"end","id":3,"session":17})");
  for (const SessionId session : {SessionId{0}, SessionId{1}, SessionId{4294967295u}}) {
    request_round_trip<EndRequest>(Request{1, EndRequest{}, session});
    const ParsedRequest p = parse_request(to_json_line(Request{2, StopRequest{}, session}));
    ASSERT_TRUE(p.request.has_value()) << p.error;
    EXPECT_EQ(p.request->session, session);
    EXPECT_EQ(p.session, session);
    const ParsedReply r = parse_reply(to_json_line(Reply{2, EndedReply{}, session}));
    ASSERT_TRUE(r.reply.has_value()) << r.error;
    EXPECT_EQ(r.reply->session, session);
    EXPECT_TRUE(std::holds_alternative<EndedReply>(r.reply->body));
  }
  // A refused line still names its session, so the error goes back to the session that sent it.
  const ParsedRequest refused = parse_request(R"({"v":1,"op":"setup","id":4,"session":9,"qps":0})");
  EXPECT_FALSE(refused.request.has_value());
  EXPECT_EQ(refused.session, 9u);
  EXPECT_EQ(refused.id, 4u);
}

// The controller's answer to a dialed agent's hello: admitted as a host, or refused and why.
TEST(AgentProtocolRoundTrip, AdmissionSaysWhoOrWhyNot) {
  EXPECT_EQ(
      to_json_line(Request{std::nullopt, AdmissionRequest{.admitted = true, .host = "h7"}, 0}),
      R"({"v":1,"op":"admission","admitted":true,"host":"h7","why":""})");
  for (const AdmissionRequest& a : {AdmissionRequest{.admitted = true, .host = "h7", .why = ""},
                                    AdmissionRequest{.admitted = false,
                                    .host = "",
                                    .why = "an agent on host 'vm' is not in "
                                           "the inventory"}}) {
    const ParsedRequest p = parse_request(to_json_line(Request{std::nullopt, a, 0}));
    ASSERT_TRUE(p.request.has_value()) << p.error;
    const auto* got = std::get_if<AdmissionRequest>(&p.request->body);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->admitted, a.admitted);
    EXPECT_EQ(got->host, a.host);
    EXPECT_EQ(got->why, a.why);
  }
  EXPECT_FALSE(parse_request(R"({"v":1,"op":"admission","host":"h7"})").request.has_value());
  EXPECT_FALSE(parse_request(R"({"v":1,"op":"admission","admitted":"yes"})").request.has_value());
}

TEST(AgentProtocolRoundTrip, SetupWithEveryFieldSet) {
  SetupRequest s;
  s.provider = "verbs";
  s.device = "mlx5_0";
  s.port = 2;
  s.gid_index = 3;
  s.address = "2001:db8::7";
  s.workload = Workload::bw;
  s.role = Role::server;
  s.opcode = Opcode::read;
  s.qps = 4;
  s.message_bytes = 1 << 20;
  s.tx_depth = 128;
  s.mtu = 4096;
  s.traffic_class = 106;
  s.traffic_classes = {106, 98, 0, 255};  // one per QP at most
  s.sl = 3;
  s.udp_sports = {49152, 49153, 1, 65535};
  s.bidirectional = true;
  s.gpu = 7;
  s.retry_count = 3;
  s.ack_timeout_us = 131072;
  s.link_gbps = 0.1 + 0.2;  // a double with no short decimal form
  expect_same(request_round_trip<SetupRequest>(Request{11, s}), s);

  SetupRequest lat;
  lat.provider = "soft";
  lat.device = "a.b:c-d_9";
  lat.port = 255;
  lat.gid_index = 255;
  lat.address = "10.1.2.3";
  lat.workload = Workload::lat;
  lat.role = Role::client;
  lat.opcode = Opcode::send;
  lat.message_bytes = 1 << 30;
  lat.tx_depth = 4096;
  lat.mtu = 256;
  lat.traffic_class = 255;
  lat.udp_sports = {4791};
  lat.retry_count = 0;
  lat.ack_timeout_us = 60'000'000;
  expect_same(request_round_trip<SetupRequest>(Request{std::nullopt, lat}), lat);

  SetupRequest ud;
  ud.address = "10.1.2.3";
  ud.opcode = Opcode::send;
  ud.transport = traffic::QpType::ud;
  ud.message_bytes = 1024;
  ud.mtu = 1024;
  expect_same(request_round_trip<SetupRequest>(Request{5, ud}), ud);
}

TEST(AgentProtocolRoundTrip, ConnectWithEveryFieldSet) {
  ConnectRequest c;
  c.peers = {peer(0xFFFFFF), peer(2)};
  c.peers[1].endpoint.gid = "";
  c.peers[1].endpoint.psn = 0;
  c.peers[1].endpoint.udp_sport = 0;
  c.peers[1].endpoint.mtu = 512;
  expect_same(request_round_trip<ConnectRequest>(Request{12, c}).peers, c.peers);
}

TEST(AgentProtocolRoundTrip, StartWithEveryFieldSet) {
  StartRequest s;
  s.at_ns = 1'700'000'000'123'456'789;
  s.seconds = 0.25;
  s.iterations = 1'000'000'000'000;
  s.warmup_seconds = 3600;
  s.warmup_iterations = 1'000'000'000;
  s.stats_ms = 10;
  s.messages_per_qp = 1'000'000'000'000;
  expect_same(request_round_trip<StartRequest>(Request{13, s}), s);

  StartRequest edge;
  edge.seconds = 86400;
  edge.warmup_seconds = 0;
  edge.warmup_iterations = 0;
  edge.stats_ms = 0;
  edge.at_ns = std::numeric_limits<std::int64_t>::max();
  expect_same(request_round_trip<StartRequest>(Request{std::nullopt, edge}), edge);
}

TEST(AgentProtocolRoundTrip, HelloReplyWithDevices) {
  HelloReply h;
  h.version = "0.4.0-dev";
  h.protocol = 1;
  h.host = "h1.example";
  h.providers = {"soft", "verbs"};
  h.workloads = {"bw", "lat"};
  h.devices = {{"soft", "soft", {"10.0.0.1", "2001:db8::1"}, "RoCEv2 over UDP"},
               {"mlx5_0", "verbs", {}, "fw 28.39.1002, port 1 ACTIVE \"quoted\"\ttab é"}};
  h.capture_backends = {"pcap", "dpdk"};
  h.engines = {"rocehil", "perftest"};
  const auto back = reply_round_trip<HelloReply>(Reply{1, h});
  EXPECT_EQ(back.capture_backends, h.capture_backends);
  EXPECT_EQ(back.engines, h.engines);
  EXPECT_EQ(back.version, h.version);
  EXPECT_EQ(back.protocol, h.protocol);
  EXPECT_EQ(back.host, h.host);
  EXPECT_EQ(back.providers, h.providers);
  EXPECT_EQ(back.workloads, h.workloads);
  ASSERT_EQ(back.devices.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.devices[i].name, h.devices[i].name);
    EXPECT_EQ(back.devices[i].provider, h.devices[i].provider);
    EXPECT_EQ(back.devices[i].addresses, h.devices[i].addresses);
    EXPECT_EQ(back.devices[i].detail, h.devices[i].detail);
  }
}

TEST(AgentProtocolRoundTrip, SetupConnectedStartedStatsAndErrorReplies) {
  SetupReply s;
  s.endpoints = {peer(17), peer(18)};
  expect_same(reply_round_trip<SetupReply>(Reply{2, s}).endpoints, s.endpoints);

  reply_round_trip<ConnectedReply>(Reply{3, ConnectedReply{}});

  const auto started = reply_round_trip<StartedReply>(Reply{4, StartedReply{1'700'000'000, 1234}});
  EXPECT_EQ(started.at_ns, 1'700'000'000);
  EXPECT_EQ(started.late_ns, 1234);

  const StatsEvent stats{1.5, 1'000'000, u64_max, 97.25};
  const auto back = reply_round_trip<StatsEvent>(Reply{std::nullopt, stats});
  EXPECT_EQ(back.t_s, 1.5);
  EXPECT_EQ(back.messages, 1'000'000u);
  EXPECT_EQ(back.bytes, u64_max);
  EXPECT_EQ(back.gbps, 97.25);

  const ErrorReply error{"setup: field 'qps' \"x\"\n\x01 é"};
  EXPECT_EQ(reply_round_trip<ErrorReply>(Reply{5, error}).message, error.message);
}

ResultsEvent full_results() {
  ResultsEvent r;
  r.workload = Workload::lat;
  r.role = Role::server;
  r.stopped = true;
  r.seconds = 2.000123;
  r.messages = 123456;
  r.bytes = 123456 * 64;
  r.gbps = 0.1 + 0.2;  // a double with no short decimal form
  r.messages_per_s = 61725.5;
  r.errors = 2;
  r.first_error = "qp 0x11: retry_exceeded";
  r.first_error_status = traffic::WcStatus::retry_exceeded;
  r.gpu_registration = "peer memory";
  QpResult q;
  q.qpn = 0xFFFFFF;
  q.udp_sport = 65535;
  q.messages = 9;
  q.bytes = 10;
  q.gbps = 11.5;
  q.counters.packets_sent = 1;
  q.counters.bytes_sent = 2;
  q.counters.packets_received = 3;
  q.counters.bytes_received = 4;
  q.counters.retransmitted_packets = 5;
  q.counters.timeouts = 6;
  q.counters.naks_sent = 7;
  q.counters.naks_received = 8;
  q.counters.cnps_sent = 9;
  q.counters.cnps_handled = 10;
  q.counters.ce_received = 11;
  q.counters.out_of_sequence = 12;
  q.counters.rate_cuts = 14;
  q.counters.rate_gbps = 13.25;
  q.source_crc32 = 0xFFFFFFFF;
  q.target_crc32 = 0;
  q.traffic_class = 98;
  r.per_qp = {q, q};
  r.per_qp[1].qpn = 0;
  r.per_qp[1].source_crc32.reset();
  r.per_qp[1].target_crc32.reset();
  r.per_qp[1].traffic_class.reset();  // absent when not said
  LatencySummary l;
  l.samples = 1000;
  l.min_us = 1.25;
  l.mean_us = 2.5;
  l.p50_us = 2.25;
  l.p99_us = 7;
  l.p999_us = 9.75;
  l.max_us = 1e9;
  l.histogram = {{1.5, 3}, {2, 900}, {1e300, u64_max}};
  r.latency = l;
  return r;
}

TEST(AgentProtocolRoundTrip, ResultsWithLatencyAndWithout) {
  const ResultsEvent r = full_results();
  expect_same(reply_round_trip<ResultsEvent>(Reply{6, r}), r);

  ResultsEvent bw = r;
  bw.workload = Workload::bw;
  bw.role = Role::client;
  bw.latency.reset();
  bw.per_qp.clear();
  const auto back = reply_round_trip<ResultsEvent>(Reply{std::nullopt, bw});
  EXPECT_FALSE(back.latency.has_value());
  expect_same(back, bw);

  // The device's events, as a port that went down and came back reports them.
  bw.events = {{.at_ns = 1'764'000'000'123'456'789,
                .device = "mlx5_0",
                .kind = "port_error",
                .detail = "port 1"},
               {.at_ns = 1'764'000'001'000'000'000,
                .device = "mlx5_0",
                .kind = "port_active",
                .detail = "port 1"}};
  expect_same(reply_round_trip<ResultsEvent>(Reply{std::nullopt, bw}), bw);
  const std::string line = to_json_line(Reply{std::nullopt, bw});
  EXPECT_NE(line.find(R"("events":[{"at_ns":1764000000123456789,"device":"mlx5_0",)"
                      R"("kind":"port_error","detail":"port 1"})"),
            std::string::npos)
      << line;
  std::string bad = line;
  bad.replace(bad.find(R"("kind":"port_error")"), 19, R"("kind":"")");
  EXPECT_EQ(parse_reply(bad).error,
            "results: events[0].kind must be non-empty printable ASCII on one line, at most 64 "
            "characters, got \"\"");
}

// Every status a failed completion can have crosses the wire by its traffic name; an agent
// older than the field sends none, which reads back as no status (not as one that grades).
TEST(AgentProtocolRoundTrip, TheFirstErrorsStatusByName) {
  using traffic::WcStatus;
  ResultsEvent r = full_results();
  for (const WcStatus s :
       {WcStatus::local_length_error, WcStatus::local_protection_error,
        WcStatus::remote_access_error, WcStatus::remote_invalid_request, WcStatus::retry_exceeded,
        WcStatus::flushed, WcStatus::rnr_retry_exceeded}) {
    r.first_error_status = s;
    const std::string line = to_json_line(Reply{1, r});
    EXPECT_NE(line.find(fmt::format(R"("first_error_status":"{}")", traffic::to_string(s))),
              std::string::npos)
        << line;
    EXPECT_EQ(reply_round_trip<ResultsEvent>(Reply{1, r}).first_error_status, s);
  }
  r.first_error_status.reset();
  const std::string line = to_json_line(Reply{1, r});
  EXPECT_EQ(line.find("first_error_status"), std::string::npos) << line;
  EXPECT_EQ(reply_round_trip<ResultsEvent>(Reply{1, r}).first_error_status, std::nullopt);
}

TEST(AgentProtocolRoundTrip, SixteenThousandQpsFitOnALine) {
  static_assert(max_agent_qps == 16384);
  SetupReply s;
  for (std::uint32_t i = 1; i <= max_agent_qps; ++i) s.endpoints.push_back(peer(i));
  const std::string line = to_json_line(Reply{1, s});
  EXPECT_LT(line.size(), max_agent_line_bytes);
  expect_same(reply_round_trip<SetupReply>(Reply{1, s}).endpoints, s.endpoints);

  ConnectRequest c{s.endpoints};
  expect_same(request_round_trip<ConnectRequest>(Request{1, c}).peers, c.peers);
  // One more than the protocol takes is refused, not truncated.
  c.peers.push_back(peer(max_agent_qps + 1));
  const ParsedRequest over = parse_request(to_json_line(Request{1, c}));
  EXPECT_FALSE(over.request.has_value());
  EXPECT_NE(over.error.find("peers"), std::string::npos) << over.error;

  // Each QP's result, counters included, on one results line.
  ResultsEvent r;
  for (std::uint32_t i = 0; i < max_agent_qps; ++i) {
    QpResult q;
    q.qpn = i + 1;
    q.udp_sport = static_cast<std::uint16_t>(49152 + i);
    q.messages = 1'000'000'000;
    q.bytes = 65'536'000'000'000;
    r.per_qp.push_back(q);
  }
  const std::string results = to_json_line(Reply{1, r});
  EXPECT_LT(results.size(), max_agent_line_bytes);
  EXPECT_EQ(reply_round_trip<ResultsEvent>(Reply{1, r}).per_qp.size(), max_agent_qps);
}

// ---- the wire text itself ----

TEST(AgentProtocolWire, FieldNamesAndOrder) {
  EXPECT_EQ(to_json_line(Request{7, HelloRequest{}}), R"({"v":1,"op":"hello","id":7})");
  EXPECT_EQ(to_json_line(Request{std::nullopt, StopRequest{}}), R"({"v":1,"op":"stop"})");
  // Every field set here, so the text does not move with the structs' defaults.
  SetupRequest s;
  s.provider = "soft";
  s.device = "";
  s.port = 1;
  s.gid_index = -1;
  s.address = "10.0.0.1";
  s.workload = Workload::bw;
  s.role = Role::client;
  s.opcode = Opcode::write;
  s.qps = 1;
  s.message_bytes = 65536;
  s.tx_depth = 64;
  s.mtu = 1024;
  s.traffic_class = 0;
  s.udp_sports = {};
  s.bidirectional = false;
  s.retry_count = 7;
  s.ack_timeout_us = 4096;
  EXPECT_EQ(to_json_line(Request{1, s}),
            R"({"v":1,"op":"setup","id":1,"provider":"soft","device":"","port":1,)"
            R"("gid_index":-1,"address":"10.0.0.1","workload":"bw","role":"client",)"
            R"("opcode":"write","qps":1,"message_bytes":65536,"tx_depth":64,"mtu":1024,)"
            R"("traffic_class":0,"sl":0,"udp_sports":[],"bidirectional":false,"transport":"rc",)"
            R"("gpu":-1,"retry_count":7,)"
            R"("ack_timeout_us":4096,"link_gbps":0.0})");
  EXPECT_EQ(
      to_json_line(Request{std::nullopt, ConnectRequest{{peer(5)}}}),
      R"({"v":1,"op":"connect","peers":[{"address":"192.0.2.10",)"
      R"("gid":"fe80000000000000020c29fffe1a2b3C","qpn":5,"psn":1193046,"udp_sport":61000,)"
      R"("mtu":2048,"max_reads":16,"remote_address":18446744073709551600,"rkey":3735928559}]})");
  EXPECT_EQ(to_json_line(Request{std::nullopt, StartRequest{0, 2, 0, 0.2, 100, 1000}}),
            R"({"v":1,"op":"start","at_ns":0,"seconds":2.0,"iterations":0,)"
            R"("warmup_seconds":0.2,"warmup_iterations":100,"stats_ms":1000,"messages_per_qp":0})");
  EXPECT_EQ(to_json_line(Reply{3, ErrorReply{"bad"}}),
            R"({"v":1,"op":"error","id":3,"error":"bad"})");
  EXPECT_EQ(to_json_line(Reply{std::nullopt, ConnectedReply{}}), R"({"v":1,"op":"connected"})");
  EXPECT_EQ(to_json_line(Reply{std::nullopt, StartedReply{5, 0}}),
            R"({"v":1,"op":"started","at_ns":5,"late_ns":0})");
  EXPECT_EQ(to_json_line(Reply{std::nullopt, StatsEvent{1, 2, 3, 4.5}}),
            R"({"v":1,"op":"stats","t_s":1.0,"messages":2,"bytes":3,"gbps":4.5})");
  ResultsEvent r = full_results();
  r.per_qp.resize(1);
  r.latency->histogram.resize(1);
  EXPECT_EQ(
      to_json_line(Reply{std::nullopt, r}),
      R"({"v":1,"op":"results","workload":"lat","role":"server","stopped":true,)"
      R"("seconds":2.000123,"messages":123456,"bytes":7901184,)"
      R"("gbps":0.30000000000000004,"messages_per_s":61725.5,"errors":2,)"
      R"("first_error":"qp 0x11: retry_exceeded","first_error_status":"retry_exceeded",)"
      R"("per_qp":[{"qpn":16777215,)"
      R"("udp_sport":65535,"messages":9,"bytes":10,"gbps":11.5,"counters":{)"
      R"("packets_sent":1,"bytes_sent":2,"packets_received":3,"bytes_received":4,)"
      R"("retransmitted_packets":5,"timeouts":6,"naks_sent":7,"naks_received":8,)"
      R"("cnps_sent":9,"cnps_handled":10,"ce_received":11,"out_of_sequence":12,"rate_cuts":14,)"
      R"("rate_gbps":13.25},"source_crc32":4294967295,"target_crc32":0,"traffic_class":98}],)"
      R"("gpu_registration":"peer memory","latency":{"samples":1000,"min_us":1.25,"mean_us":2.5,"p50_us":2.25,)"
      R"("p99_us":7.0,"p999_us":9.75,"max_us":1000000000.0,"histogram":[[1.5,3]]}})");
}

// A counter the provider did not measure (verbs counts only bytes per QP) is left out on the wire
// and comes back marked unmeasured: never a 0 that reads as a measurement.
TEST(AgentProtocolWire, UnmeasuredCountersAreAbsentOnTheWireAndStayUnmeasured) {
  ResultsEvent r = full_results();
  using K = traffic::QpCounter;
  r.per_qp[0].counters.measured =
      traffic::QpCounters::bit(K::bytes_sent) | traffic::QpCounters::bit(K::bytes_received);
  const std::string line = to_json_line(Reply{1, r});
  EXPECT_NE(line.find(R"("counters":{"bytes_sent":2,"bytes_received":4},)"), std::string::npos)
      << line;
  const ParsedReply p = parse_reply(line);
  ASSERT_TRUE(p.reply.has_value()) << p.error;
  const auto& back = std::get<ResultsEvent>(p.reply->body);
  EXPECT_EQ(back.per_qp[0].counters.measured, r.per_qp[0].counters.measured);
  EXPECT_FALSE(back.per_qp[0].counters.has(K::retransmitted_packets));
  EXPECT_EQ(back.per_qp[0].counters.bytes_received, 4u);
  EXPECT_EQ(back.per_qp[1].counters.measured, traffic::QpCounters::all);
  // The old required form still reads as fully measured; an empty object as nothing measured.
  std::string none = line;
  none.replace(none.find(R"({"bytes_sent":2,"bytes_received":4})"), 35, "{}");
  const ParsedReply q = parse_reply(none);
  ASSERT_TRUE(q.reply.has_value()) << q.error << " in " << none;
  EXPECT_EQ(std::get<ResultsEvent>(q.reply->body).per_qp[0].counters.measured, 0u);
}

// The NIC counter deltas travel with the results, and a hostile counter name or count is refused.
TEST(AgentProtocolWire, NicCounterDeltasRoundTripAndAreValidated) {
  ResultsEvent r = full_results();
  traffic::NicCounterDelta d;
  d.nic = {.rdma_device = "mlx5_0", .port = 1, .netdev = "ens1f0np0"};
  d.seconds = 2.5;
  d.deltas = {{"hw_counters/np_cnp_sent", 12}, {"statistics/rx_bytes", 18446744073709551615u}};
  d.reset = {"hw_counters/rp_cnp_handled"};
  d.problems = {"ethtool statistics of ens1f0np0: ETHTOOL_GSSET_INFO: Operation not supported"};
  d.device_reset = "its firmware changed from 28.39.1002 to 28.40.1000";
  r.nics = {d};
  const std::string line = to_json_line(Reply{1, r});
  const ParsedReply p = parse_reply(line);
  ASSERT_TRUE(p.reply.has_value()) << p.error;
  const auto& back = std::get<ResultsEvent>(p.reply->body).nics;
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].nic.rdma_device, "mlx5_0");
  EXPECT_EQ(back[0].nic.netdev, "ens1f0np0");
  EXPECT_EQ(back[0].deltas, d.deltas);
  EXPECT_EQ(back[0].reset, d.reset);
  EXPECT_EQ(back[0].problems, d.problems);
  EXPECT_EQ(back[0].device_reset, d.device_reset);
  EXPECT_EQ(back[0].seconds, 2.5);
  const auto refused = [&](const std::string& from, const std::string& to) {
    std::string bad = line;
    bad.replace(bad.find(from), from.size(), to);
    return parse_reply(bad).error;
  };
  EXPECT_EQ(refused(R"("hw_counters/np_cnp_sent":12)", R"("np_cnp_sent":12)"),
            "results: nics[0].deltas key must be SOURCE/NAME (hw_counters/np_cnp_sent), got "
            "\"np_cnp_sent\"");
  EXPECT_EQ(refused(R"("hw_counters/np_cnp_sent":12)", R"("hw_counters/np_cnp_sent":-1)"),
            "results: nics[0].deltas.hw_counters/np_cnp_sent must be an integer from 0 to "
            "18446744073709551615, got -1");
  EXPECT_EQ(refused(R"("port":1)", R"("port":0)"),
            "results: nics[0].port must be an integer from 1 to 255, got 0");
}

// What bent the agent's timing travels with its results; a value the kernel did not give stays
// absent on the far side, and numbers that cannot be are refused.
TEST(AgentProtocolWire, SchedulingReportRoundTripsAndIsValidated) {
  ResultsEvent r = full_results();
  SchedulingReport c;
  c.seconds = 2.5;
  c.cpus = 2;
  c.wakeups = 2400;
  c.wake_late_p50_us = 12.5;
  c.wake_late_p99_us = 2900;
  c.wake_late_max_us = 8000;
  c.thread_wait_max_ms = 800;
  c.threads_wait_ms = 950.5;
  c.steal_share = 0.01;
  c.pressure_some_share = 0.6;
  c.pressure_some_avg10 = 55.2;
  c.run_queue_max = 7;
  c.load1 = 3.25;
  r.cpu = c;
  const std::string line = to_json_line(Reply{1, r});
  const ParsedReply p = parse_reply(line);
  ASSERT_TRUE(p.reply.has_value()) << p.error;
  const auto& back = std::get<ResultsEvent>(p.reply->body).cpu;
  ASSERT_TRUE(back);
  EXPECT_EQ(back->seconds, 2.5);
  EXPECT_EQ(back->cpus, 2u);
  EXPECT_EQ(back->wakeups, 2400u);
  EXPECT_EQ(back->wake_late_p50_us, 12.5);
  EXPECT_EQ(back->wake_late_p99_us, 2900);
  EXPECT_EQ(back->wake_late_max_us, 8000);
  EXPECT_EQ(back->thread_wait_max_ms, 800);
  EXPECT_EQ(back->threads_wait_ms, 950.5);
  EXPECT_EQ(back->steal_share, 0.01);
  EXPECT_EQ(back->pressure_some_share, 0.6);
  EXPECT_EQ(back->pressure_some_avg10, 55.2);
  EXPECT_EQ(back->run_queue_max, 7u);
  EXPECT_EQ(back->load1, 3.25);

  // A kernel without PSI or schedstats: those are absent, not 0, on both sides of the wire.
  SchedulingReport bare = c;
  bare.pressure_some_share.reset();
  bare.pressure_some_avg10.reset();
  bare.thread_wait_max_ms.reset();
  bare.threads_wait_ms.reset();
  r.cpu = bare;
  const std::string bare_line = to_json_line(Reply{1, r});
  EXPECT_EQ(bare_line.find("pressure"), std::string::npos) << bare_line;
  const ParsedReply q = parse_reply(bare_line);
  ASSERT_TRUE(q.reply.has_value()) << q.error;
  const auto& bare_back = std::get<ResultsEvent>(q.reply->body).cpu;
  ASSERT_TRUE(bare_back);
  EXPECT_FALSE(bare_back->pressure_some_share);
  EXPECT_FALSE(bare_back->pressure_some_avg10);
  EXPECT_FALSE(bare_back->thread_wait_max_ms);
  EXPECT_TRUE(bare_back->steal_share);

  // Results without it (an older agent) still read, with none.
  r.cpu.reset();
  const ParsedReply none = parse_reply(to_json_line(Reply{1, r}));
  ASSERT_TRUE(none.reply.has_value()) << none.error;
  EXPECT_FALSE(std::get<ResultsEvent>(none.reply->body).cpu);

  const auto refused = [&](const std::string& from, const std::string& to) {
    std::string bad = line;
    const auto at = bad.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    return parse_reply(bad).error;
  };
  EXPECT_EQ(refused(R"("steal_share":0.01)", R"("steal_share":1.5)"),
            "results: cpu.steal_share must be a number from 0 to 1, got 1.5");
  EXPECT_EQ(refused(R"("run_queue_max":7)", R"("run_queue_max":-1)"),
            "results: cpu.run_queue_max must be an integer from 0 to 4294967295, got -1");
  EXPECT_EQ(refused(R"("wakeups":2400,)", ""), "results: cpu: missing required field 'wakeups'");
  EXPECT_EQ(refused(R"("wake_late_p99_us":2900)", R"("wake_late_p99_us":9000)"),
            "results: cpu wake_late_p50_us 12.5 <= wake_late_p99_us 9000 <= wake_late_max_us "
            "8000 does not hold");
  EXPECT_EQ(refused(R"("threads_wait_ms":950.5)", R"("threads_wait_ms":1)"),
            "results: cpu.thread_wait_max_ms 800 is more than threads_wait_ms 1");
  EXPECT_EQ(refused(R"("load1":3.25)", R"("load1":3.25,"steal":1)"),
            "results: cpu: unknown field 'steal' (known: seconds, cpus, wakeups, "
            "wake_late_p50_us, wake_late_p99_us, wake_late_max_us, thread_wait_max_ms, "
            "threads_wait_ms, steal_share, pressure_some_share, pressure_some_avg10, "
            "run_queue_max, load1)");
}

TEST(AgentProtocolWire, HelloReplyText) {
  HelloReply h;
  h.version = "1.0";
  h.host = "h1";
  h.providers = {"soft"};
  h.workloads = {"bw"};
  h.devices = {{"soft", "soft", {"10.0.0.1"}, ""}};
  EXPECT_EQ(to_json_line(Reply{0, h}),
            R"({"v":1,"op":"hello","id":0,"version":"1.0","protocol":1,"host":"h1",)"
            R"("providers":["soft"],"workloads":["bw"],"devices":[{"name":"soft",)"
            R"("provider":"soft","addresses":["10.0.0.1"],"detail":""}],"capture_backends":[],)"
            R"("engines":["rocehil"]})");
}

TEST(AgentProtocolWire, NonFiniteNumbersAreWrittenAsNullAndRefused) {
  StatsEvent s;
  s.gbps = std::nan("");
  const std::string line = to_json_line(Reply{1, s});
  EXPECT_EQ(line, R"({"v":1,"op":"stats","id":1,"t_s":0.0,"messages":0,"bytes":0,"gbps":null})");
  EXPECT_EQ(parse_reply(line).error, "stats: field 'gbps' must be a finite number, got null");

  ResultsEvent r = full_results();
  r.per_qp[1].counters.rate_gbps = std::numeric_limits<double>::infinity();
  EXPECT_EQ(parse_reply(to_json_line(Reply{1, r})).error,
            "results: per_qp[1].counters.rate_gbps must be a finite number, got null");
  r = full_results();
  r.latency->histogram[1].upper_us = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(parse_reply(to_json_line(Reply{1, r})).error,
            "results: latency.histogram[1][0] must be a finite number, got null");
}

TEST(AgentProtocolWire, InvalidUtf8IsReplacedNotThrown) {
  const ErrorReply e{"bad byte \xff here"};
  std::string line;
  EXPECT_NO_THROW(line = to_json_line(Reply{1, e}));
  EXPECT_EQ(line, "{\"v\":1,\"op\":\"error\",\"id\":1,\"error\":\"bad byte \xEF\xBF\xBD here\"}");
  const ParsedReply back = parse_reply(line);
  ASSERT_TRUE(back.reply.has_value()) << back.error;
  EXPECT_EQ(std::get<ErrorReply>(back.reply->body).message, "bad byte \xEF\xBF\xBD here");
}

// ---- defaults ----

TEST(AgentProtocolDefaults, AbsentFieldsTakeTheStructDefaults) {
  const ParsedRequest p = parse_request(R"({"v":1,"op":"setup","address":"10.0.0.1"})");
  ASSERT_TRUE(p.request.has_value()) << p.error;
  EXPECT_FALSE(p.id.has_value());
  SetupRequest expected;
  expected.address = "10.0.0.1";
  expect_same(std::get<SetupRequest>(p.request->body), expected);

  const ParsedRequest start = parse_request(R"({"v":1,"op":"start"})");
  ASSERT_TRUE(start.request.has_value()) << start.error;
  expect_same(std::get<StartRequest>(start.request->body), StartRequest{});

  const ParsedRequest connect =
      parse_request(R"({"v":1,"op":"connect","peers":[{"address":"10.0.0.2","qpn":1}]})");
  ASSERT_TRUE(connect.request.has_value()) << connect.error;
  PeerEndpoint minimal;
  minimal.endpoint.address = "10.0.0.2";
  minimal.endpoint.qpn = 1;
  expect_same(std::get<ConnectRequest>(connect.request->body).peers, {minimal});
}

TEST(AgentProtocolDefaults, LatStoresSendWhenOpcodeIsAbsentOrSend) {
  for (const char* line : {R"({"v":1,"op":"setup","address":"::1","workload":"lat"})",
                           R"({"v":1,"op":"setup","address":"::1","workload":"lat",)"
                           R"("opcode":"send","qps":1,"bidirectional":false})"}) {
    const ParsedRequest p = parse_request(line);
    ASSERT_TRUE(p.request.has_value()) << p.error;
    EXPECT_EQ(std::get<SetupRequest>(p.request->body).opcode, Opcode::send) << line;
  }
}

TEST(AgentProtocolDefaults, AcceptsEdgesOfEveryRange) {
  // qps * message_bytes at exactly 4 GiB; integers written as -0 and with exponents are not
  // integers in JSON terms except -0, which is 0.
  const ParsedRequest p =
      parse_request(R"({"v":1,"op":"setup","id":-0,"address":"255.255.255.255","qps":4,)"
                    R"("message_bytes":1073741824,"gid_index":-1,"port":255,"traffic_class":0})");
  ASSERT_TRUE(p.request.has_value()) << p.error;
  EXPECT_EQ(p.id, 0u);
  const auto& s = std::get<SetupRequest>(p.request->body);
  EXPECT_EQ(s.qps, 4u);
  EXPECT_EQ(s.message_bytes, 1u << 30);

  const ParsedRequest start =
      parse_request(R"({"v":1,"op":"start","seconds":1e-9,"stats_ms":3600000})");
  ASSERT_TRUE(start.request.has_value()) << start.error;
  EXPECT_EQ(std::get<StartRequest>(start.request->body).seconds, 1e-9);

  // Keys in any order, whitespace around tokens, a trailing newline.
  const ParsedRequest spaced = parse_request(" { \"op\" : \"stop\" , \"v\" : 1 , \"id\" : 3 }\r\n");
  ASSERT_TRUE(spaced.request.has_value()) << spaced.error;
  EXPECT_EQ(spaced.id, 3u);
}

// ---- malformed and hostile lines ----

struct Bad {
  std::string line;
  std::string error;
};

const std::string setup_prefix = R"({"v":1,"op":"setup","address":"10.0.0.1",)";
const std::string fix = "run the same rocehil version on the controller and the hosts";

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string peers(std::size_t n) {
  std::string out = R"({"v":1,"op":"connect","peers":[)";
  for (std::size_t i = 0; i < n; ++i)
    out += std::string(i ? "," : "") + R"({"address":"10.0.0.2","qpn":1})";
  return out + "]}";
}

// "0,0,...,0": a big array in few bytes.
std::string zeros(std::size_t n) {
  std::string out = "0";
  for (std::size_t i = 1; i < n; ++i) out += ",0";
  return out;
}

void expect_rejected(const std::vector<Bad>& corpus, bool reply) {
  for (const Bad& bad : corpus) {
    SCOPED_TRACE(bad.line.size() > 200 ? bad.line.substr(0, 200) + "..." : bad.line);
    std::string error;
    if (reply) {
      const ParsedReply p = parse_reply(bad.line);
      EXPECT_FALSE(p.reply.has_value());
      error = p.error;
    } else {
      const ParsedRequest p = parse_request(bad.line);
      EXPECT_FALSE(p.request.has_value());
      error = p.error;
    }
    EXPECT_EQ(error, bad.error);
    // One line of printable ASCII, whatever came in.
    for (char c : error) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << int(c);
  }
}

TEST(AgentProtocolRejects, NotAMessage) {
  expect_rejected(
      {
          {"", "empty line: expected one JSON object"},
          {" \t\r\n", "empty line: expected one JSON object"},
          {"not json",
           "not valid JSON at column 2: syntax error while parsing value - invalid literal; "
           "last read: 'no'"},
          {R"({"v":1,"op":"hello")",
           "not valid JSON at column 20: syntax error while parsing object - unexpected end of "
           "input; expected '}'"},
          {R"({"v":1,"op":"hello"} x)",
           "not valid JSON at column 22: syntax error while parsing value - invalid literal; "
           "last read: '\"hello\"} x'; expected end of input"},
          {R"({"v":1,"op":"hello","x":1e400})",
           "not valid JSON at column 29: number overflow parsing '1e400'"},
          {R"({"v":1,"op":"hello","x":")" + std::string(100, 'a'),
           "not valid JSON at column 126: syntax error while parsing value - invalid string: "
           "missing closing quote; last read: '\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
          {"[1,2]", "expected a JSON object, got an array of 2 entries"},
          {R"("setup")", R"(expected a JSON object, got "setup")"},
          {"42", "expected a JSON object, got 42"},
          {"null", "expected a JSON object, got null"},
      },
      false);
}

TEST(AgentProtocolRejects, HostileBytes) {
  const std::string hello = R"({"v":1,"op":"hello"})";
  std::string long_line =
      R"({"v":1,"op":"hello","x":")" + std::string(max_agent_line_bytes, 'a') + R"("})";
  expect_rejected(
      {
          {long_line,
           "line of 16777243 bytes is over the limit of 16777216: each message is one "
           "JSON object on one line"},
          {std::string(100000, '['),
           "JSON nested deeper than 16 levels at column 17: no agent protocol message nests that "
           "deep"},
          {R"({"v":1,"op":"hello","x":)" + nested(16) + "}",
           "JSON nested deeper than 16 levels at column 40: no agent protocol message nests that "
           "deep"},
          {hello + std::string(1, '\0') + R"({"v":2})",
           "not valid JSON at column 21: a NUL byte (JSON text has none)"},
          {std::string(R"({"v":1,"op":"setup","device":"a)") + '\0' + R"("})",
           "not valid JSON at column 32: a NUL byte (JSON text has none)"},
          {"{\"v\":1,\"op\":\"setup\",\"device\":\"\xff\xfe\"}",
           "not valid JSON at column 31: syntax error while parsing value - invalid string: "
           "ill-formed UTF-8 byte; last read: '\"\\xff'"},
          {"{\"v\":1,\"op\":\"\xc3\"}",
           "not valid JSON at column 15: syntax error while parsing value - invalid string: "
           "ill-formed UTF-8 byte; last read: '\"\\xc3\"'"},
          {"{\"v\":1,\"op\":\"a\nb\"}",
           "not valid JSON at column 15: syntax error while parsing value - invalid string: "
           "control character U+000A (LF) must be escaped to \\u000A or \\n; last read: "
           "'\"a<U+000A>'"},
          {peers(16385),
           "connect: field 'peers' must have 1 to 16384 entries (one per QP), got 16385"},
          {peers(30000),
           "connect: field 'peers' must have 1 to 16384 entries (one per QP), got 30000"},
          {R"({"v":1,"op":"connect","peers":[)" + zeros(100000) + "]}",
           "connect: field 'peers' must have 1 to 16384 entries (one per QP), got 100000"},
          {peers(600000),
           "line of 18600032 bytes is over the limit of 16777216: each message is "
           "one JSON object on one line"},
      },
      false);
}

TEST(AgentProtocolRejects, DepthUpToSixteenIsOnlyAnUnknownField) {
  // 1 level for the object + 15 arrays: the pre-scan lets it through, the field check refuses it.
  expect_rejected(
      {{R"({"v":1,"op":"hello","x":)" + nested(15) + "}",
        "hello: unknown field 'x' (hello takes no fields besides v, op, id and session)"},
       // Brackets inside strings are not nesting.
       {setup_prefix + R"("device":")" + std::string(20, '[') + R"("})",
        "setup: field 'device' must be an RDMA device name such as mlx5_0: up to 64 "
        "letters, digits, '_', '.', ':' or '-', got \"[[[[[[[[[[[[[[[[[[[[\""}},
      false);
  // A line of exactly the limit is read.
  std::string padded = R"({"v":1,"op":"hello"})";
  padded.resize(max_agent_line_bytes, ' ');
  EXPECT_TRUE(parse_request(padded).request.has_value());
}

TEST(AgentProtocolRejects, Envelope) {
  expect_rejected(
      {
          {R"({"op":"hello"})",
           "missing field 'v' (the protocol version; this agent speaks 1): " + fix},
          {R"({"v":2,"op":"hello"})",
           "protocol version 2 is not supported (this agent speaks 1): " + fix},
          {R"({"v":0,"op":"hello"})",
           "protocol version 0 is not supported (this agent speaks 1): " + fix},
          {R"({"v":"1","op":"hello"})",
           R"(protocol version "1" is not supported (this agent speaks 1): )" + fix},
          {R"({"v":1.0,"op":"hello"})",
           "protocol version 1.0 is not supported (this agent speaks 1): " + fix},
          {R"({"v":-1,"op":"hello"})",
           "protocol version -1 is not supported (this agent speaks 1): " + fix},
          {R"({"v":1})",
           "missing field 'op' (known: hello, setup, connect, start, stop, capture_start, "
           "capture_stop, perftest, settings, end, admission, iperf3)"},
          {R"({"v":1,"op":5})", "field 'op' must be a string, got 5"},
          {R"({"v":1,"op":"frobnicate"})",
           "unknown op 'frobnicate' (known: hello, setup, connect, start, stop, capture_start, "
           "capture_stop, perftest, settings, end, admission, iperf3)"},
          {R"({"v":1,"op":"Hello"})",
           "unknown op 'Hello' (known: hello, setup, connect, start, stop, capture_start, "
           "capture_stop, perftest, settings, end, admission, iperf3)"},
          {R"({"v":1,"op":"\u001b[2J\u0007it's a very long op name, longer than forty"})",
           "unknown op '\\x1b[2J\\x07it\\'s a very long op name, longer th...' (known: hello, "
           "setup, connect, start, stop, capture_start, capture_stop, perftest, settings, end, "
           "admission, iperf3)"},
          {R"({"v":1,"op":"connected"})",
           "unknown op 'connected' (known: hello, setup, connect, start, stop, capture_start, "
           "capture_stop, perftest, settings, end, admission, iperf3)"},
          {R"({"v":1,"op":"hello","id":-1})",
           "hello: field 'id' must be an integer from 0 to 18446744073709551615, got -1"},
          {R"({"v":1,"op":"hello","id":1.5})",
           "hello: field 'id' must be an integer from 0 to 18446744073709551615, got 1.5"},
          {R"({"v":1,"op":"hello","id":"7"})",
           R"(hello: field 'id' must be an integer from 0 to 18446744073709551615, got "7")"},
          {R"({"v":1,"op":"hello","id":18446744073709551616})",
           "hello: field 'id' must be an integer from 0 to 18446744073709551615, got "
           "1.8446744073709552e+19"},
          {R"({"v":1,"op":"hello","x":1})",
           "hello: unknown field 'x' (hello takes no fields besides v, op, id and session)"},
          {R"({"v":1,"op":"hello","session":-1})",
           "hello: field 'session' must be an integer from 0 to 4294967295, got -1"},
          {R"({"v":1,"op":"hello","session":4294967296})",
           "hello: field 'session' must be an integer from 0 to 4294967295, got 4294967296"},
          {R"({"v":1,"op":"hello","session":"2"})",
           R"(hello: field 'session' must be an integer from 0 to 4294967295, got "2")"},
          {R"({"v":1,"op":"end","session":1,"now":true})",
           "end: unknown field 'now' (end takes no fields besides v, op, id and session)"},
          {R"({"v":1,"op":"stop","seconds":1})",
           "stop: unknown field 'seconds' (stop takes no fields besides v, op, id and session)"},
      },
      false);
}

TEST(AgentProtocolRejects, SetupFields) {
  const std::string s = setup_prefix;
  expect_rejected(
      {
          {R"({"v":1,"op":"setup"})", "setup: missing required field 'address'"},
          {s + R"("qsp":4})",
           "setup: unknown field 'qsp' (known: provider, device, port, gid_index, address, "
           "workload, role, opcode, qps, message_bytes, tx_depth, mtu, traffic_class, "
           "traffic_classes, sl, udp_sports, bidirectional, transport, gpu, retry_count, "
           "ack_timeout_us, link_gbps, "
           "rate_bps, collective)"},
          {s + R"("qps":"4"})",
           R"(setup: field 'qps' must be an integer from 1 to 16384, got "4")"},
          {s + R"("qps":2.0})", "setup: field 'qps' must be an integer from 1 to 16384, got 2.0"},
          {s + R"("qps":1e300})",
           "setup: field 'qps' must be an integer from 1 to 16384, got 1e+300"},
          {s + R"("qps":18446744073709551616})",
           "setup: field 'qps' must be an integer from 1 to 16384, got 1.8446744073709552e+19"},
          {s + R"("qps":0})", "setup: field 'qps' must be an integer from 1 to 16384, got 0"},
          {s + R"("qps":16385})",
           "setup: field 'qps' must be an integer from 1 to 16384, got 16385"},
          {s + R"("qps":50000})",
           "setup: field 'qps' must be an integer from 1 to 16384, got 50000"},
          {s + R"("qps":null})", "setup: field 'qps' must be an integer from 1 to 16384, got null"},
          {s + R"("qps":[1]})",
           "setup: field 'qps' must be an integer from 1 to 16384, got an array of 1 entry"},
          {s + R"("message_bytes":-1})",
           "setup: field 'message_bytes' must be an integer from 1 to 1073741824, got -1"},
          {s + R"("message_bytes":1073741825})",
           "setup: field 'message_bytes' must be an integer from 1 to 1073741824, got "
           "1073741825"},
          {s + R"("port":0})", "setup: field 'port' must be an integer from 1 to 255, got 0"},
          {s + R"("port":256})", "setup: field 'port' must be an integer from 1 to 255, got 256"},
          {s + R"("gid_index":-2})",
           "setup: field 'gid_index' must be an integer from -1 to 255, got -2"},
          {s + R"("tx_depth":4097})",
           "setup: field 'tx_depth' must be an integer from 1 to 4096, got 4097"},
          {s + R"("mtu":1000})",
           "setup: field 'mtu' must be 256, 512, 1024, 2048 or 4096, got 1000"},
          {s + R"("mtu":8192})",
           "setup: field 'mtu' must be 256, 512, 1024, 2048 or 4096, got 8192"},
          {s + R"("traffic_class":256})",
           "setup: field 'traffic_class' must be an integer from 0 to 255, got 256"},
          {s + R"("retry_count":8})",
           "setup: field 'retry_count' must be an integer from 0 to 7, got 8"},
          {s + R"("ack_timeout_us":0})",
           "setup: field 'ack_timeout_us' must be an integer from 1 to 60000000, got 0"},
          {s + R"("link_gbps":-1})",
           "setup: field 'link_gbps' must be a number from 0 to 10000, got -1"},
          {s + R"("link_gbps":10001})",
           "setup: field 'link_gbps' must be a number from 0 to 10000, got 10001"},
          {s + R"("transport":"uc"})",
           R"(setup: field 'transport' must be "rc" or "ud", got "uc")"},
          {s + R"("transport":"ud","opcode":"write"})",
           R"(setup: transport "ud" sends with opcode "send", got "write")"},
          {s + R"("transport":"ud","workload":"lat"})",
           R"(setup: transport "ud" needs workload "bw", not "lat")"},
          {s + R"("transport":"ud","opcode":"send","message_bytes":2048,"mtu":1024})",
           "setup: a UD message is one packet: message_bytes must be at most the mtu (1024), "
           "got 2048"},
          {s + R"("transport":"ud","opcode":"send","message_bytes":64,"udp_sports":[5000]})",
           "setup: UD QPs take no per-QP source port: drop 'udp_sports'"},
          {s + R"("gpu":-2})", "setup: field 'gpu' must be an integer from -1 to 255, got -2"},
          {s + R"("bidirectional":"yes"})",
           R"(setup: field 'bidirectional' must be true or false, got "yes")"},
          {s + R"("bidirectional":1})",
           "setup: field 'bidirectional' must be true or false, got 1"},
          {s + R"("provider":"rdma"})",
           R"(setup: field 'provider' must be "soft" or "verbs", got "rdma")"},
          {s + R"("workload":"BW"})",
           R"(setup: field 'workload' must be one of "bw", "lat" or "collective", got "BW")"},
          {s + R"("role":1})", R"(setup: field 'role' must be "client" or "server", got 1)"},
          {s + R"("opcode":"send_with_imm"})",
           R"(setup: field 'opcode' must be one of "send", "write", "write_with_imm" or "read", )"
           R"(got "send_with_imm")"},
          {s + R"("device":"mlx\"5"})",
           "setup: field 'device' must be an RDMA device name such as mlx5_0: up to 64 letters, "
           "digits, '_', '.', ':' or '-', got \"mlx\\\"5\""},
          {s + R"("device":"mlx\n5"})",
           "setup: field 'device' must be an RDMA device name such as mlx5_0: up to 64 letters, "
           "digits, '_', '.', ':' or '-', got \"mlx\\n5\""},
          {s + R"("device":"../../etc"})",
           "setup: field 'device' must be an RDMA device name such as mlx5_0: up to 64 letters, "
           "digits, '_', '.', ':' or '-', got \"../../etc\""},
          {s + R"("device":")" + std::string(65, 'm') + R"("})",
           "setup: field 'device' must be an RDMA device name such as mlx5_0: up to 64 letters, "
           "digits, '_', '.', ':' or '-', got \"" +
               std::string(40, 'm') + "...\""},
          {s + R"("udp_sports":[1,2]})",
           "setup: field 'udp_sports' has 2 entries but qps is 1: give one port per QP, or none"},
          {s + R"("qps":2,"udp_sports":[4791,0]})",
           "setup: udp_sports[1] must be an integer from 1 to 65535, got 0"},
          {s + R"("udp_sports":4791})", "setup: field 'udp_sports' must be an array, got 4791"},
          {s + R"("qps":4,"traffic_classes":[106,98,42,34,26,18]})",
           "setup: field 'traffic_classes' has 6 entries but qps is 4: give 1 to 4 classes (QP i "
           "gets item i % n), or leave it out"},
          {s + R"("traffic_classes":[]})",
           "setup: field 'traffic_classes' has 0 entries but qps is 1: give 1 to 1 classes (QP i "
           "gets item i % n), or leave it out"},
          {s + R"("qps":2,"traffic_classes":[106,256]})",
           "setup: traffic_classes[1] must be an integer from 0 to 255, got 256"},
          {s + R"("traffic_classes":106})",
           "setup: field 'traffic_classes' must be an array, got 106"},
          {s + R"("workload":"lat","qps":2})", R"(setup: workload "lat" needs qps 1, got 2)"},
          {s + R"("workload":"lat","bidirectional":true})",
           R"(setup: bidirectional needs workload "bw" (lat is already a ping-pong))"},
          {s + R"("workload":"lat","opcode":"write"})",
           R"(setup: workload "lat" pings with opcode "send", got "write": drop 'opcode' or )"
           R"(set it to "send")"},
          {s + R"("qps":8,"message_bytes":1073741824})",
           "setup: qps * message_bytes must be at most 4 GiB (4294967296), got 8 * 1073741824 = "
           "8589934592: use fewer QPs or smaller messages"},
          {s + R"("qps":1024,"message_bytes":4194305})",
           "setup: qps * message_bytes must be at most 4 GiB (4294967296), got 1024 * 4194305 = "
           "4294968320: use fewer QPs or smaller messages"},
      },
      false);
}

TEST(AgentProtocolRejects, Addresses) {
  const std::string want =
      "setup: field 'address' must be an IPv4 or IPv6 address such as 192.0.2.1 or 2001:db8::1, "
      "got ";
  const auto setup = [](const std::string& address) {
    return R"({"v":1,"op":"setup","address":")" + address + R"("})";
  };
  expect_rejected(
      {
          {setup("h1;touch /tmp/x"), want + R"("h1;touch /tmp/x")"},
          {setup("$(id)"), want + R"x("$(id)")x"},
          {setup("`id`"), want + R"("`id`")"},
          {setup(""), want + R"("")"},
          {setup("h1"), want + R"("h1")"},
          {setup("10.0.0.1 "), want + R"("10.0.0.1 ")"},
          {setup("10.0.0.256"), want + R"("10.0.0.256")"},
          {setup("fe80::1%eth0"), want + R"("fe80::1%eth0")"},
          {setup(R"(10.0.0.1\u0000x)"), want + R"("10.0.0.1\x00x")"},
          {setup("0000:0000:0000:0000:0000:ffff:255.255.255.255x"),
           want + R"("0000:0000:0000:0000:0000:ffff:255.255.25...")"},
          {R"({"v":1,"op":"setup","address":["10.0.0.1"]})",
           "setup: field 'address' must be a string, got an array of 1 entry"},
      },
      false);
  // The longest literal inet_pton takes is 45 characters.
  EXPECT_TRUE(parse_request(setup("0000:0000:0000:0000:0000:ffff:255.255.255.255")).request);
}

TEST(AgentProtocolRejects, ConnectPeers) {
  const auto connect = [](const std::string& peer) {
    return R"({"v":1,"op":"connect","peers":[{"address":"10.0.0.2","qpn":1},)"
           R"({"address":"10.0.0.3","qpn":2},)" +
           peer + "]}";
  };
  expect_rejected(
      {
          {R"({"v":1,"op":"connect"})", "connect: missing required field 'peers'"},
          {R"({"v":1,"op":"connect","peers":[]})",
           "connect: field 'peers' must have 1 to 16384 entries (one per QP), got 0"},
          {R"({"v":1,"op":"connect","peers":{}})",
           "connect: field 'peers' must be an array, got an object"},
          {connect("7"), "connect: peers[2] must be an object, got 7"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"gid":"xyz"})"),
           R"(connect: peers[2].gid must be empty or 32 hex digits, got "xyz")"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"gid":"fe80000000000000020c29fffe1a2b3g"})"),
           R"(connect: peers[2].gid must be empty or 32 hex digits, got )"
           R"("fe80000000000000020c29fffe1a2b3g")"},
          {connect(R"({"address":"10.0.0.4"})"), "connect: peers[2]: missing required field 'qpn'"},
          {connect(R"({"qpn":3})"), "connect: peers[2]: missing required field 'address'"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"qkey":1})"),
           "connect: peers[2]: unknown field 'qkey' (known: address, gid, qpn, psn, udp_sport, "
           "mtu, max_reads, remote_address, rkey)"},
          {connect(R"({"address":"10.0.0.4","qpn":0})"),
           "connect: peers[2].qpn must be an integer from 1 to 16777215, got 0"},
          {connect(R"({"address":"10.0.0.4","qpn":16777216})"),
           "connect: peers[2].qpn must be an integer from 1 to 16777215, got 16777216"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"psn":16777216})"),
           "connect: peers[2].psn must be an integer from 0 to 16777215, got 16777216"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"udp_sport":65536})"),
           "connect: peers[2].udp_sport must be an integer from 0 to 65535, got 65536"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"mtu":1500})"),
           "connect: peers[2].mtu must be 256, 512, 1024, 2048 or 4096, got 1500"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"max_reads":256})"),
           "connect: peers[2].max_reads must be an integer from 0 to 255, got 256"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"remote_address":-1})"),
           "connect: peers[2].remote_address must be an integer from 0 to "
           "18446744073709551615, got -1"},
          {connect(R"({"address":"10.0.0.4","qpn":3,"rkey":4294967296})"),
           "connect: peers[2].rkey must be an integer from 0 to 4294967295, got 4294967296"},
          {connect(R"x({"address":"$(id)","qpn":3})x"),
           "connect: peers[2].address must be an IPv4 or IPv6 address such as 192.0.2.1 or "
           "2001:db8::1, got \"$(id)\""},
      },
      false);
}

TEST(AgentProtocolRejects, StartFields) {
  const std::string s = R"({"v":1,"op":"start",)";
  expect_rejected(
      {
          {s + R"("at_ns":-5})",
           "start: field 'at_ns' must be an integer from 0 to 9223372036854775807, got -5"},
          {s + R"("at_ns":9223372036854775808})",
           "start: field 'at_ns' must be an integer from 0 to 9223372036854775807, got "
           "9223372036854775808"},
          {s + R"("seconds":0})",
           "start: field 'seconds' must be a number above 0 and at most 86400, got 0"},
          {s + R"("seconds":-0.0})",
           "start: field 'seconds' must be a number above 0 and at most 86400, got -0.0"},
          {s + R"("seconds":86400.5})",
           "start: field 'seconds' must be a number above 0 and at most 86400, got 86400.5"},
          {s + R"("seconds":"2"})",
           R"(start: field 'seconds' must be a number above 0 and at most 86400, got "2")"},
          {s + R"("warmup_seconds":-1})",
           "start: field 'warmup_seconds' must be a number from 0 to 3600, got -1"},
          {s + R"("iterations":1000000000001})",
           "start: field 'iterations' must be an integer from 0 to 1000000000000, got "
           "1000000000001"},
          {s + R"("iterations":1e6})",
           "start: field 'iterations' must be an integer from 0 to 1000000000000, got 1000000.0"},
          {s + R"("warmup_iterations":1000000001})",
           "start: field 'warmup_iterations' must be an integer from 0 to 1000000000, got "
           "1000000001"},
          {s + R"("stats_ms":5})",
           "start: field 'stats_ms' must be 0 (no stats) or an integer from 10 to 3600000, got 5"},
          {s + R"("stats_ms":3600001})",
           "start: field 'stats_ms' must be 0 (no stats) or an integer from 10 to 3600000, got "
           "3600001"},
          {s + R"("messages_per_qp":1000000000001})",
           "start: field 'messages_per_qp' must be an integer from 0 to 1000000000000, got "
           "1000000000001"},
          {s + R"("duration":2})",
           "start: unknown field 'duration' (known: at_ns, seconds, iterations, warmup_seconds, "
           "warmup_iterations, stats_ms, messages_per_qp)"},
      },
      false);
}

TEST(AgentProtocolRejects, IdIsKeptForTheErrorReply) {
  struct Case {
    std::string line;
    std::optional<std::uint64_t> id;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"v":1,"op":"setup","id":42,"qps":0,"address":"10.0.0.1"})", 42},
           {R"({"v":2,"op":"hello","id":7})", 7},
           {R"({"id":9,"op":"frobnicate","v":1})", 9},
           {R"({"id":18446744073709551615,"op":"stop","v":1,"x":[]})", u64_max},
           {R"({"v":1,"id":5,"op":"connect","peers":[{"address":"10.0.0.2","qpn":1,"gid":"x"}]})",
            5},
           {R"({"v":1,"op":"hello","id":-1})", std::nullopt},
           {R"({"v":1,"op":"hello","id":1})" + std::string(1, '\0'), std::nullopt},
           {R"({"v":1,"op":"hello","id":1)", std::nullopt},
       }) {
    const ParsedRequest p = parse_request(c.line);
    EXPECT_FALSE(p.request.has_value()) << c.line;
    EXPECT_NE(p.error, "") << c.line;
    EXPECT_EQ(p.id, c.id) << c.line;
  }
}

// ---- replies: as strict, from the controller's side ----

// A valid line with one field changed by `edit`.
std::string edited(const Reply& reply, const std::string& from, const std::string& to) {
  std::string line = to_json_line(reply);
  const auto at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) line.replace(at, from.size(), to);
  return line;
}

TEST(AgentProtocolRejects, Replies) {
  const Reply results{1, full_results()};
  const Reply setup{1, SetupReply{{peer(3)}}};
  expect_rejected(
      {
          {R"({"v":2,"op":"hello"})",
           "protocol version 2 is not supported (this controller speaks 1): " + fix},
          {R"({"op":"hello"})",
           "missing field 'v' (the protocol version; this controller speaks 1): " + fix},
          {R"({"v":1,"op":"start"})",
           "unknown op 'start' (known: hello, setup, connected, started, stats, results, error, "
           "capture_started, capture_summary, perftest_listening, perftest_results, settings, "
           "ended, iperf3_listening, iperf3_results)"},
          {R"({"v":1,"op":"stats","t_s":1,"messages":1,"bytes":1})",
           "stats: missing required field 'gbps'"},
          {R"({"v":1,"op":"stats","t_s":1,"messages":-1,"bytes":1,"gbps":1})",
           "stats: field 'messages' must be an integer from 0 to 18446744073709551615, got -1"},
          {R"({"v":1,"op":"stats","t_s":1,"messages":1,"bytes":1.5,"gbps":1})",
           "stats: field 'bytes' must be an integer from 0 to 18446744073709551615, got 1.5"},
          {R"({"v":1,"op":"stats","t_s":1,"messages":1,"bytes":1,"gbps":1,"rate":2})",
           "stats: unknown field 'rate' (known: t_s, messages, bytes, gbps)"},
          {R"({"v":1,"op":"connected","x":1})",
           "connected: unknown field 'x' (connected takes no fields besides v, op, id and "
           "session)"},
          {R"({"v":1,"op":"error"})", "error: missing required field 'error'"},
          {R"({"v":1,"op":"error","error":5})", "error: field 'error' must be a string, got 5"},
          {R"({"v":1,"op":"started","at_ns":1})", "started: missing required field 'late_ns'"},
          {R"({"v":1,"op":"started","at_ns":1,"late_ns":-1})",
           "started: field 'late_ns' must be an integer from 0 to 9223372036854775807, got -1"},
          {R"({"v":1,"op":"hello","id":-3,"version":"x"})",
           "hello: field 'id' must be an integer from 0 to 18446744073709551615, got -3"},
          {R"({"v":1,"op":"hello","version":"1","protocol":1,"host":"h","providers":[1],)"
           R"("workloads":[],"devices":[],"capture_backends":[]})",
           "hello: providers[0] must be a string, got 1"},
          {R"({"v":1,"op":"hello","version":"1","protocol":1,"host":"h","providers":[],)"
           R"("workloads":[],"devices":[{"name":"soft","provider":"soft","addresses":[]}],)"
           R"("capture_backends":[]})",
           "hello: devices[0]: missing required field 'detail'"},
          {edited(setup, R"("psn":1193046,)", ""),
           "setup: endpoints[0]: missing required field 'psn'"},
          {edited(setup, R"("qpn":3)", R"("qpn":16777216)"),
           "setup: endpoints[0].qpn must be an integer from 1 to 16777215, got 16777216"},
          {R"({"v":1,"op":"setup","endpoints":[]})",
           "setup: field 'endpoints' must have 1 to 16384 entries (one per QP), got 0"},
          {edited(results, R"("first_error_status":"retry_exceeded")",
                  R"("first_error_status":"retry exceeded")"),
           R"(results: field 'first_error_status' must be one of "local_length_error", )"
           R"("local_protection_error", "remote_access_error", "remote_invalid_request", )"
           R"("retry_exceeded", "flushed" or "rnr_retry_exceeded", got "retry exceeded")"},
          {edited(results, R"("first_error_status":"retry_exceeded")",
                  R"("first_error_status":"success")"),
           R"(results: field 'first_error_status' must be one of "local_length_error", )"
           R"("local_protection_error", "remote_access_error", "remote_invalid_request", )"
           R"("retry_exceeded", "flushed" or "rnr_retry_exceeded", got "success")"},
          {edited(results, R"("errors":2,)", R"("errors":0,)"),
           "results: first_error_status without errors: a run with no errors has no first one"},
          {edited(results, R"("gpu_registration":"peer memory")", R"("gpu_registration":"dmabuf")"),
           R"(results: field 'gpu_registration' must be "dma-buf" or "peer memory", got "dmabuf")"},
          {edited(results, R"("qpn":16777215)", R"("qpn":16777216)"),
           "results: per_qp[0].qpn must be an integer from 0 to 16777215, got 16777216"},
          {edited(results, R"("naks_sent":7)", R"("naks_sent":-7)"),
           "results: per_qp[0].counters.naks_sent must be an integer from 0 to "
           "18446744073709551615, got -7"},
          {edited(results, R"("source_crc32":4294967295)", R"("source_crc32":4294967296)"),
           "results: per_qp[0].source_crc32 must be an integer from 0 to 4294967295, got "
           "4294967296"},
          {edited(results, R"([1.5,3])", R"([1.5,3,4])"),
           "results: latency.histogram[0] must be a pair [upper_us, count], got an array of 3 "
           "entries"},
          {edited(results, R"([1.5,3])", R"([1.5,-3])"),
           "results: latency.histogram[0][1] must be an integer from 0 to 18446744073709551615, "
           "got -3"},
          {edited(results, R"("samples":1000,)", ""),
           "results: latency: missing required field 'samples'"},
          {edited(results, R"("workload":"lat")", R"("workload":"ping")"),
           R"(results: field 'workload' must be one of "bw", "lat" or "collective", got "ping")"},
          {edited(results, R"("stopped":true)", R"("stopped":"true")"),
           R"(results: field 'stopped' must be true or false, got "true")"},
          {edited(results, R"("latency":{)", R"("latency":null,"x":{)"),
           "results: unknown field 'x' (known: workload, role, stopped, seconds, messages, "
           "bytes, gbps, messages_per_s, errors, first_error, first_error_status, per_qp, "
           "gpu_registration, latency, collective, events, nics, cpu, pacing, timeline)"},
          {edited(results, R"("latency":{)", R"("lat":{)"),
           "results: unknown field 'lat' (known: workload, role, stopped, seconds, messages, "
           "bytes, gbps, messages_per_s, errors, first_error, first_error_status, per_qp, "
           "gpu_registration, latency, collective, events, nics, cpu, pacing, timeline)"},
          {std::string(100000, '{'),
           "JSON nested deeper than 16 levels at column 17: no agent protocol message nests that "
           "deep"},
          {"{\"v\":1,\"op\":\"error\",\"error\":\"" + std::string(max_agent_line_bytes, 'e') +
               "\"}",
           "line of 16777247 bytes is over the limit of 16777216: each message is one JSON object "
           "on one line"},
      },
      true);
}

TEST(AgentProtocolRejects, LatencyNullIsNotAbsent) {
  ResultsEvent r = full_results();
  r.latency.reset();
  std::string line = to_json_line(Reply{1, r});
  line.insert(line.size() - 1, R"(,"latency":null)");
  EXPECT_EQ(parse_reply(line).error, "results: field 'latency' must be an object, got null");
}

TEST(AgentProtocolRoundTrip, CollectiveSetupAndResults) {
  SetupRequest s;
  s.address = "198.18.0.11";
  s.workload = Workload::collective;
  s.qps = 8;
  s.message_bytes = 1 << 24;
  s.udp_sports = {49152, 49153, 49154, 49155, 49156, 49157, 49158, 49159};
  s.collective = CollectiveSetup{.pattern = "hierarchical_allreduce",
                                 .ranks = 16,
                                 .rank = 15,
                                 .ranks_per_host = 4,
                                 .pipeline = 1024,
                                 .seed = u64_max,
                                 .strategy = "round_robin",
                                 .sport_seed = 0};
  expect_same(request_round_trip<SetupRequest>(Request{3, s}), s);

  ResultsEvent r;
  r.workload = Workload::collective;
  r.collective =
      CollectiveReport{.iterations = 3,
                       .start_ns = 1'700'000'000'000'000'000,
                       .iteration_end_ns = {1, 2, std::numeric_limits<std::int64_t>::max()},
                       .wait_ns = {0, u64_max},
                       .step_ns = {5, 6},
                       .wait_total_ns = u64_max,
                       .longest_wait_step = 1,
                       .longest_wait_ns = u64_max,
                       .bytes_sent = 100,
                       .bytes_received = 200,
                       .output_crc32 = 0xdeadbeef};
  expect_same(reply_round_trip<ResultsEvent>(Reply{4, r}), r);
  r.collective->output_crc32.reset();
  const auto back = reply_round_trip<ResultsEvent>(Reply{4, r});
  EXPECT_FALSE(back.collective->output_crc32.has_value());
  expect_same(back, r);
}

TEST(AgentProtocolRoundTrip, ACollectiveTakesMoreThan256QpsPerConnection) {
  // 256 was the limit while the immediate's share field was 8 bits; it now widens with qps.
  for (const std::uint32_t qps : {256u, 257u, 4096u, 16384u}) {
    SetupRequest s;
    s.address = "198.18.0.11";
    s.workload = Workload::collective;
    s.qps = qps;
    s.collective = CollectiveSetup{.pattern = "allreduce", .ranks = 2, .rank = 0};
    expect_same(request_round_trip<SetupRequest>(Request{3, s}), s);
  }
}

TEST(AgentProtocol, AReportOfThousandsOfStepsKeepsTheirSumAndLongestNotEachStep) {
  for (const std::size_t steps : {max_steps_reported, max_steps_reported + 1}) {
    CollectiveReport r{.iterations = 0, .wait_ns = std::vector<std::uint64_t>(steps, 10)};
    r.step_ns = r.wait_ns;
    r.wait_ns[5] = 99;
    fold_step_waits(r, false);
    EXPECT_EQ(r.wait_total_ns, 10 * (steps - 1) + 99) << steps;
    EXPECT_EQ(r.longest_wait_step, 5u);
    EXPECT_EQ(r.longest_wait_ns, 99u);
    EXPECT_EQ(r.wait_ns.size(), steps > max_steps_reported ? 0 : steps);
    EXPECT_EQ(r.step_ns.size(), r.wait_ns.size());
    ResultsEvent e;
    e.workload = Workload::collective;
    e.collective = r;
    expect_same(reply_round_trip<ResultsEvent>(Reply{4, e}), e);
  }
  // A report whose totals cannot be is refused.
  CollectiveReport bad{.wait_ns = {1, 2}, .step_ns = {3, 4}};
  fold_step_waits(bad, false);
  ResultsEvent e;
  e.workload = Workload::collective;
  e.collective = bad;
  e.collective->longest_wait_ns = 4;
  EXPECT_EQ(parse_reply(to_json_line(Reply{1, e})).error,
            "results: collective.longest_wait_ns 4 is more than wait_total_ns 3");
  e.collective = bad;
  e.collective->longest_wait_step = 2;
  EXPECT_EQ(parse_reply(to_json_line(Reply{1, e})).error,
            "results: collective.longest_wait_step 2 is past its 2 steps");
  // pairwise keeps each step: its matrix is made of them.
  CollectiveReport pairwise{.wait_ns = std::vector<std::uint64_t>(max_steps_reported + 1, 1)};
  pairwise.step_ns = pairwise.wait_ns;
  fold_step_waits(pairwise, true);
  EXPECT_EQ(pairwise.step_ns.size(), max_steps_reported + 1);
  EXPECT_EQ(pairwise.wait_total_ns, max_steps_reported + 1);
  // The sum saturates rather than wrapping to a small wait.
  CollectiveReport huge{.wait_ns = {std::numeric_limits<std::uint64_t>::max(), 5}};
  huge.step_ns = {1, 1};
  fold_step_waits(huge, false);
  EXPECT_EQ(huge.wait_total_ns, std::numeric_limits<std::uint64_t>::max());
}

TEST(AgentProtocolRejects, CollectiveSetup) {
  const std::string s = std::string(setup_prefix) + R"("workload":"collective",)";
  const std::string c = s + R"("collective":{"pattern":"allreduce","ranks":4,"rank":1)";
  expect_rejected(
      {
          {s + R"("qps":1})",
           R"(setup: workload "collective" needs field 'collective' (pattern, ranks, rank))"},
          {std::string(setup_prefix) +
               R"("collective":{"pattern":"allreduce","ranks":4,"rank":1}})",
           R"(setup: field 'collective' needs workload "collective", not "bw")"},
          {s + R"("collective":{"pattern":"allreduce2","ranks":4,"rank":1}})",
           "setup: collective.pattern must be one of \"allreduce\", \"allgather\", "
           "\"reduce_scatter\", \"alltoall\", \"broadcast\", \"tree_allreduce\", "
           "\"hierarchical_allreduce\", \"incast\", \"permutation\" or \"pairwise\", got "
           "\"allreduce2\""},
          {s + R"("collective":{"pattern":"allreduce","ranks":4,"rank":4}})",
           "setup: collective.rank must be an integer from 0 to 3, got 4"},
          {s + R"("collective":{"pattern":"allreduce","ranks":1,"rank":0}})",
           "setup: collective.ranks must be an integer from 2 to 65536, got 1"},
          {s + R"("collective":{"pattern":"allreduce","rank":0}})",
           "setup: collective: missing required field 'ranks'"},
          {c + R"(,"ranks_per_host":3}})",
           "setup: collective.ranks_per_host must divide ranks (4), got 3"},
          {c + R"(,"strategy":"spray"}})",
           R"(setup: collective.strategy must be "split" or "round_robin", got "spray")"},
          {c + R"(,"pipeline":0}})",
           "setup: collective.pipeline must be an integer from 1 to 1024, got 0"},
          {c + R"(,"root":0}})",
           "setup: collective: unknown field 'root' (known: pattern, ranks, rank, ranks_per_host, "
           "pipeline, seed, strategy, sport_seed)"},
          {c + R"(},"opcode":"write"})",
           "setup: a collective moves its data with write_with_imm: drop 'opcode'"},
          {c + R"(},"role":"server"})",
           "setup: a collective has no roles or directions: drop 'role' and 'bidirectional'"},
          {c + R"(},"qps":16385})",
           "setup: field 'qps' must be an integer from 1 to 16384, got 16385"},
          {c + R"(},"gpu":0})", "setup: a collective checks its data in host memory: drop 'gpu'"},
      },
      false);
}

}  // namespace
}  // namespace rocehil::agent
