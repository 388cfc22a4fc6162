// The capture messages of the agent protocol: capture_start / capture_stop and their replies.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

CaptureStartRequest full_start() {
  CaptureStartRequest c;
  c.backend = "pcap";
  c.iface = "rocehil-t-m1";
  c.filter = "cnp-pfc";
  c.snaplen = 256;
  c.write = "/var/tmp/rocehil captures/spine1.pcapng";
  c.seconds = 12.5;
  c.ring_files = 4;
  c.ring_mb = 64;
  c.buffer_mb = 8;
  c.link_gbps = 400;
  c.max_flows = 7;
  c.storm_ms = 20.5;
  c.direction = "spine-to-leaf";
  c.spine_macs = {"0c:42:a1:00:00:01", "0c:42:a1:00:00:02"};
  c.remote_session = 1023;
  c.remote_source = "2001:db8::5e";
  return c;
}

TEST(AgentCaptureProtocol, StartRoundTripsWithEveryField) {
  const Request request{9, full_start()};
  const std::string line = to_json_line(request);
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto* back = std::get_if<CaptureStartRequest>(&parsed.request->body);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->iface, "rocehil-t-m1");
  EXPECT_EQ(back->filter, "cnp-pfc");
  EXPECT_EQ(back->snaplen, 256u);
  EXPECT_EQ(back->write, "/var/tmp/rocehil captures/spine1.pcapng");
  EXPECT_EQ(back->seconds, 12.5);
  EXPECT_EQ(back->ring_files, 4u);
  EXPECT_EQ(back->ring_mb, 64u);
  EXPECT_EQ(back->buffer_mb, 8u);
  EXPECT_EQ(back->link_gbps, 400);
  EXPECT_EQ(back->max_flows, 7u);
  EXPECT_EQ(back->storm_ms, 20.5);
  EXPECT_EQ(back->direction, "spine-to-leaf");
  EXPECT_EQ(back->spine_macs, full_start().spine_macs);
  EXPECT_EQ(back->remote_session, 1023u);
  EXPECT_EQ(back->remote_source, "2001:db8::5e");
  EXPECT_EQ(to_json_line(*parsed.request), line);
  const ParsedRequest stop = parse_request(R"({"v":1,"op":"capture_stop","id":3})");
  ASSERT_TRUE(stop.request.has_value()) << stop.error;
  EXPECT_TRUE(std::holds_alternative<CaptureStopRequest>(stop.request->body));
}

TEST(AgentCaptureProtocol, SpineMacsAreStoredInOneSpelling) {
  const ParsedRequest p = parse_request(
      R"({"v":1,"op":"capture_start","iface":"m1","spine_macs":["0C-42-A1-00-00-0F"]})");
  ASSERT_TRUE(p.request.has_value()) << p.error;
  EXPECT_EQ(std::get<CaptureStartRequest>(p.request->body).spine_macs,
            std::vector<std::string>{"0c:42:a1:00:00:0f"});
}

TEST(AgentCaptureProtocol, DpdkStartNeedsOnlyItsArguments) {
  const ParsedRequest p =
      parse_request(R"({"v":1,"op":"capture_start","backend":"dpdk",)"
                    R"("dpdk_args":"--no-huge --no-pci --vdev=net_af_packet0,iface=m1"})");
  ASSERT_TRUE(p.request.has_value()) << p.error;
  const auto& c = std::get<CaptureStartRequest>(p.request->body);
  EXPECT_EQ(c.backend, "dpdk");
  EXPECT_EQ(c.dpdk_args, "--no-huge --no-pci --vdev=net_af_packet0,iface=m1");
  EXPECT_EQ(c.filter, "all");
  EXPECT_EQ(c.snaplen, 128u);
}

TEST(AgentCaptureProtocol, RefusesWhatCouldHurtOrCannotWork) {
  const std::vector<std::pair<std::string, std::string>> corpus = {
      {R"({"v":1,"op":"capture_start"})",
       "capture_start: backend \"pcap\" needs field 'iface': the interface to capture on"},
      {R"({"v":1,"op":"capture_start","iface":"eth0;reboot"})",
       "capture_start: field 'iface' must be an interface or port name such as eth3 or "
       "0000:3b:00.1: up to 64 letters, digits, '_', '.', ':' or '-', got \"eth0;reboot\""},
      {R"x({"v":1,"op":"capture_start","iface":"$(id)"})x",
       "capture_start: field 'iface' must be an interface or port name such as eth3 or "
       "0000:3b:00.1: up to 64 letters, digits, '_', '.', ':' or '-', got \"$(id)\""},
      {R"({"v":1,"op":"capture_start","iface":"m1","write":"a\nb"})",
       "capture_start: field 'write' must be printable ASCII on one line, at most 4096 "
       "characters, got \"a\\nb\""},
      {R"({"v":1,"op":"capture_start","backend":"dpdk"})",
       "capture_start: backend \"dpdk\" needs field 'dpdk_args': the EAL arguments"},
      {R"({"v":1,"op":"capture_start","iface":"m1","dpdk_args":"-l 0"})",
       "capture_start: field 'dpdk_args' is for backend \"dpdk\""},
      {R"({"v":1,"op":"capture_start","backend":"af_xdp","iface":"m1"})",
       "capture_start: field 'backend' must be \"pcap\" or \"dpdk\", got \"af_xdp\""},
      {R"({"v":1,"op":"capture_start","iface":"m1","remote_source":"10.0.0.1"})",
       "capture_start: field 'remote_source' goes with 'remote_session': the session to take"},
      {R"x({"v":1,"op":"capture_start","iface":"m1","remote_session":1,"remote_source":"$(id)"})x",
       "capture_start: field 'remote_source' must be an IPv4 or IPv6 address such as 192.0.2.1 "
       "or 2001:db8::1, got \"$(id)\""},
      {R"({"v":1,"op":"capture_start","iface":"m1","remote_session":4294967296})",
       "capture_start: field 'remote_session' must be an integer from 0 to 4294967295, got "
       "4294967296"},
      {R"({"v":1,"op":"capture_start","iface":"m1","filter":"tcp"})",
       "capture_start: field 'filter' must be one of \"all\", \"roce\" or \"cnp-pfc\", got "
       "\"tcp\""},
      {R"({"v":1,"op":"capture_start","iface":"m1","snaplen":63})",
       "capture_start: field 'snaplen' must be an integer from 64 to 262144, got 63"},
      {R"({"v":1,"op":"capture_start","iface":"m1","ring_files":3,"write":"x"})",
       "capture_start: fields 'ring_files' and 'ring_mb' go together: how many files of how "
       "many MiB"},
      {R"({"v":1,"op":"capture_start","iface":"m1","ring_files":3,"ring_mb":1})",
       "capture_start: a ring of files needs field 'write': the base name"},
      {R"({"v":1,"op":"capture_start","iface":"m1","seconds":-1})",
       "capture_start: field 'seconds' must be a number from 0 to 86400, got -1"},
      {R"({"v":1,"op":"capture_start","iface":"m1","duration":5})",
       "capture_start: unknown field 'duration' (known: backend, iface, dpdk_args, filter, "
       "snaplen, write, seconds, ring_files, ring_mb, buffer_mb, link_gbps, max_flows, storm_ms, "
       "direction, spine_macs, remote_session, remote_source)"},
      {R"({"v":1,"op":"capture_start","iface":"m1","storm_ms":0})",
       "capture_start: field 'storm_ms' must be a number above 0 and at most 3600000, got 0"},
      {R"({"v":1,"op":"capture_start","iface":"m1","direction":"up"})",
       "capture_start: field 'direction' must be one of \"unknown\", \"leaf-to-spine\" or "
       "\"spine-to-leaf\", got \"up\""},
      {R"({"v":1,"op":"capture_start","iface":"m1","spine_macs":["0c:42:a1:00:00"]})",
       "capture_start: spine_macs[0] must be a MAC address such as 0c:42:a1:00:00:01, got "
       "\"0c:42:a1:00:00\""},
      {R"({"v":1,"op":"capture_stop","now":true})",
       "capture_stop: unknown field 'now' (capture_stop takes no fields besides v, op, id and "
       "session)"},
  };
  for (const auto& [line, error] : corpus) {
    SCOPED_TRACE(line);
    const ParsedRequest p = parse_request(line);
    EXPECT_FALSE(p.request.has_value());
    EXPECT_EQ(p.error, error);
  }
}

CaptureSummaryEvent full_summary() {
  CaptureSummaryEvent e;
  e.stopped = true;
  e.backend = "pcap";
  e.iface = "m1";
  e.filter = "roce";
  e.snaplen = 128;
  e.start_ns = 1'700'000'000'000'000'000;
  e.end_ns = 1'700'000'002'000'000'000;
  e.frames = 900;
  e.dropped_buffer = 60;
  e.dropped_interface = 40;
  e.coverage = 0.9;
  e.files = {"/tmp/a-0002.pcapng", "/tmp/a-0003.pcapng"};
  e.files_deleted = 1;
  e.write_error = "";
  e.analysis_json = R"({"schema_version":1,"frames":900,"cnp":{"count":3}})";
  return e;
}

TEST(AgentCaptureProtocol, RepliesRoundTrip) {
  const std::string started_line = to_json_line(
      Reply{4, CaptureStartedReply{.iface = "m1", .description = "rocehil pcap", .speed_bps = 0}});
  const ParsedReply started = parse_reply(started_line);
  ASSERT_TRUE(started.reply.has_value()) << started.error;
  EXPECT_EQ(std::get<CaptureStartedReply>(started.reply->body).iface, "m1");

  const std::string line = to_json_line(Reply{4, full_summary()});
  const ParsedReply parsed = parse_reply(line);
  ASSERT_TRUE(parsed.reply.has_value()) << parsed.error << "\n" << line;
  const auto& back = std::get<CaptureSummaryEvent>(parsed.reply->body);
  EXPECT_TRUE(back.stopped);
  EXPECT_EQ(back.frames, 900u);
  EXPECT_EQ(back.dropped_buffer, 60u);
  EXPECT_EQ(back.dropped_interface, 40u);
  EXPECT_EQ(back.coverage, 0.9);
  EXPECT_EQ(back.files, full_summary().files);
  EXPECT_EQ(back.files_deleted, 1u);
  // The analysis is kept as JSON, not as text: key order may change, content may not.
  EXPECT_EQ(nlohmann::json::parse(back.analysis_json),
            nlohmann::json::parse(full_summary().analysis_json));
  // Written again, it reads back to the same line.
  const std::string again = to_json_line(*parsed.reply);
  EXPECT_EQ(to_json_line(*parse_reply(again).reply), again);
}

TEST(AgentCaptureProtocol, SummaryMustCarryAnAnalysisOfTheKnownSchema) {
  std::string line = to_json_line(Reply{4, full_summary()});
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string copy = line;
    copy.replace(copy.find(from), from.size(), to);
    return copy;
  };
  EXPECT_EQ(parse_reply(replace(R"("schema_version":1)", R"("schema_version":2)")).error,
            "capture_summary: analysis.schema_version must be 1 (the analysis schema this "
            "controller reads), got 2");
  EXPECT_EQ(parse_reply(replace(R"("coverage":0.9)", R"("coverage":1.5)")).error,
            "capture_summary: field 'coverage' must be a number from 0 to 1, got 1.5");
  EXPECT_EQ(parse_reply(replace(R"("frames":900,"dropped)", R"("dropped)")).error,
            "capture_summary: missing required field 'frames'");
}

}  // namespace
}  // namespace rocehil::agent
