#include "rocehil/iperf/command.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include "rocehil/common/error.hpp"

namespace rocehil::iperf {

namespace {

bool is_ip_literal(const std::string& text) {
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, text.c_str(), &v4) == 1 || inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

void check(const CommandOptions& o) {
  if (o.bind.empty())
    throw input_error("iperf3: no address to bind (-B): give the host's RoCE address");
  if (!is_ip_literal(o.bind))
    throw input_error(fmt::format("iperf3 bind address '{}' is not an IP address", o.bind));
  if (o.port == 0) throw input_error("iperf3 port 0: give the port the server listens on");
  if (o.server) {
    if (!o.connect_to.empty())
      throw input_error("iperf3 server side takes no server address: it listens for the client");
    return;  // the test's settings come from the client
  }
  if (o.connect_to.empty() || !is_ip_literal(o.connect_to))
    throw input_error(fmt::format("iperf3 server address '{}' is not an IP address", o.connect_to));
  if (o.seconds == 0 || o.seconds > max_seconds)
    throw input_error(
        fmt::format("iperf3 duration {} s is out of iperf3's range 1..{}", o.seconds, max_seconds));
  if (o.streams == 0 || o.streams > max_streams)
    throw input_error(
        fmt::format("iperf3 streams {} are out of iperf3's range 1..{}", o.streams, max_streams));
  if (o.tos < -1 || o.tos > 255)
    throw input_error(
        fmt::format("iperf3 TOS {} is out of range: 0..255 (DSCP << 2 | ECN)", o.tos));
  // iperf3's UDP default is 1 Mbit/s: a run without a rate would be paced at that, unsaid.
  if (o.udp && o.rate_bps == 0)
    throw input_error("iperf3 UDP needs a rate (-b): without one iperf3 sends 1 Mbit/s; give rate");
}

}  // namespace

std::vector<std::string> command_words(const CommandOptions& o) {
  check(o);
  std::vector<std::string> w{"iperf3"};
  const auto add = [&w](std::string flag, std::string value) {
    w.push_back(std::move(flag));
    w.push_back(std::move(value));
  };
  if (o.server) {
    w.push_back("-s");
    w.push_back("-1");  // one test, then exit: the agent's run ends with it
  } else {
    add("-c", o.connect_to);
  }
  w.push_back("--json");
  // No per-second reports: the JSON holds only the totals, so a day-long run's output stays a
  // few KiB (the agent keeps at most 1 MiB of it, and a cut document reads as nothing).
  add("-i", "0");
  add("-B", o.bind);
  add("-p", std::to_string(o.port));
  if (o.server) return w;
  add("-t", std::to_string(o.seconds));
  if (o.udp) w.push_back("-u");
  if (o.rate_bps != 0) add("-b", std::to_string(o.rate_bps));
  // -S is the whole TOS byte, as the RoCE traffic class is (3.12 also has --dscp, 6 bits only).
  if (o.tos >= 0) add("-S", std::to_string(o.tos));
  if (o.streams != 1) add("-P", std::to_string(o.streams));
  return w;
}

}  // namespace rocehil::iperf
