#include "rocehil/perftest/command.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"

namespace rocehil::perftest {

namespace {

// perftest's own limits (perftest_parameters.h: MIN_ITER, MAX_ITER, MIN_TX, MAX_TX; -m takes
// 256..4096 for RoCE), checked here so the message names the setting and not perftest's flag.
constexpr std::uint64_t min_iterations = 5;
constexpr std::uint64_t max_iterations = 100'000'000;
constexpr std::uint32_t max_tx_depth = 15000;
constexpr int max_inline_bytes = 912;  // MAX_INLINE

bool is_send(Tool tool) {
  return tool == Tool::send_bw || tool == Tool::send_lat;
}

// RDMA device names as the kernel makes them (mlx5_0, rocep1s0f0, bnxt_re0): a word that
// cannot be read as an option.
bool is_device_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

bool is_ipv4_literal(const std::string& text) {
  in_addr address{};
  return inet_pton(AF_INET, text.c_str(), &address) == 1;
}

// What perftest 4.5's software rate limiter takes (perftest_parameters.c: --rate_limit read
// with atof and > 0; SW only on bandwidth tests and not on bidirectional SEND;
// perftest_resources.c run_iter_bw: whole messages per second, rate / (size * 8) * 1e9 as an
// int, so a rate under one message a second would be no limit at all).
void check_rate(const CommandOptions& o) {
  if (o.rate_gbps == 0) return;
  const std::string_view tool = program(o.tool);
  if (!(o.rate_gbps > 0) || o.rate_gbps > 1600)
    throw input_error(
        fmt::format("perftest rate {} Gbit/s is out of range: (0, 1600]", o.rate_gbps));
  if (!is_bandwidth(o.tool))
    throw input_error(fmt::format("{} takes no rate: perftest paces bandwidth tests only", tool));
  if (is_send(o.tool) && o.bidirectional)
    throw input_error(
        fmt::format("{} cannot pace a bidirectional run: perftest's software limiter refuses "
                    "bidirectional SEND",
                    tool));
  if (o.rate_gbps * 1e9 / (8.0 * static_cast<double>(o.size)) < 1)
    throw input_error(fmt::format(
        "perftest rate {} Gbit/s is under one {}-byte message a second, which perftest's "
        "limiter counts in whole messages: raise the rate or lower the size",
        o.rate_gbps, o.size));
}

void check(const CommandOptions& o) {
  const std::string_view tool = program(o.tool);
  if (!o.device.empty() && !is_device_name(o.device))
    throw input_error(
        fmt::format("perftest device '{}' is not an RDMA device name (such as "
                    "mlx5_0): letters, digits, '_', '-' and '.', not starting "
                    "with '-'",
                    o.device));
  if (o.ib_port == 0) throw input_error("perftest port 0: RDMA ports count from 1");
  if (o.gid_index < -1 || o.gid_index > 255)
    throw input_error(
        fmt::format("perftest GID index {} is out of range: 0..255, or -1 to let "
                    "perftest choose",
                    o.gid_index));
  if (o.size == 0 || o.size > (std::uint64_t{1} << 32))
    throw input_error(
        fmt::format("perftest message size {} is out of range: 1 byte .. 4 GiB", o.size));
  if (o.qps == 0) throw input_error("perftest QPs 0: a run needs at least one QP");
  if (!is_bandwidth(o.tool) && o.qps != 1)
    throw input_error(fmt::format("{} runs one QP (-q is a bandwidth option); use qps 1", tool));
  if (!is_bandwidth(o.tool) && o.bidirectional)
    throw input_error(fmt::format("{} has no bidirectional mode (-b is a bandwidth option)", tool));
  if (!is_bandwidth(o.tool) && o.tx_depth != 0)
    throw input_error(fmt::format("{} takes no TX depth (-t is a bandwidth option)", tool));
  if (o.tx_depth > max_tx_depth)
    throw input_error(fmt::format("perftest TX depth {} is over perftest's limit of {}", o.tx_depth,
                                  max_tx_depth));
  if (o.seconds != 0 && o.iterations != 0)
    throw input_error("perftest runs for a duration (-D) or a number of iterations (-n), not both");
  if (o.iterations != 0 && (o.iterations < min_iterations || o.iterations > max_iterations))
    throw input_error(fmt::format("perftest iterations {} are out of perftest's range {}..{}",
                                  o.iterations, min_iterations, max_iterations));
  if (o.mtu != 0 && o.mtu != 256 && o.mtu != 512 && o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096)
    throw input_error(
        fmt::format("perftest MTU {} is not one of 256, 512, 1024, 2048, 4096", o.mtu));
  if (o.traffic_class > 255)
    throw input_error(fmt::format("perftest traffic class {} is over 255 (it is the IP TOS byte)",
                                  o.traffic_class));
  if (o.sl > 15) throw input_error(fmt::format("perftest service level {} is over 15", o.sl));
  if (o.inline_bytes < -1 || o.inline_bytes > max_inline_bytes)
    throw input_error(
        fmt::format("perftest inline size {} is out of range: 0..{}, or -1 for "
                    "perftest's default",
                    o.inline_bytes, max_inline_bytes));
  if (o.inline_bytes >= 0 && (o.tool == Tool::read_bw || o.tool == Tool::read_lat))
    throw input_error(fmt::format("{} takes no inline size: a READ request carries no data", tool));
  if (o.ud && !is_send(o.tool))
    throw input_error(fmt::format("{} cannot run over UD: only SEND runs on UD QPs", tool));
  if (o.ud && o.mtu != 0 && o.size > o.mtu)
    throw input_error(
        fmt::format("a UD message is one packet: size {} is over the MTU {}", o.size, o.mtu));
  if (o.tcp_port == 0)
    throw input_error("perftest TCP port 0: give the port the server listens on");
  // perftest's handshake socket is IPv4 only (perftest_communication.c resolves with AF_INET).
  if (!o.server.empty() && !is_ipv4_literal(o.server))
    throw input_error(
        fmt::format("perftest server address '{}' is not an IPv4 address: "
                    "perftest's own handshake runs over IPv4 only",
                    o.server));
  check_rate(o);
  if (!o.json_file.empty() && o.json_file.front() != '/')
    throw input_error(fmt::format("perftest JSON file '{}' is not an absolute path", o.json_file));
}

}  // namespace

std::vector<std::string> command_words(const CommandOptions& o) {
  check(o);
  std::vector<std::string> w{std::string(program(o.tool))};
  const auto add = [&w](std::string flag, std::string value) {
    w.push_back(std::move(flag));
    w.push_back(std::move(value));
  };
  if (!o.device.empty()) add("-d", o.device);
  add("-i", std::to_string(o.ib_port));
  if (o.gid_index >= 0) add("-x", std::to_string(o.gid_index));
  add("-s", std::to_string(o.size));
  if (is_bandwidth(o.tool)) add("-q", std::to_string(o.qps));
  if (o.tx_depth != 0) add("-t", std::to_string(o.tx_depth));
  if (o.seconds != 0) add("-D", std::to_string(o.seconds));
  if (o.iterations != 0) add("-n", std::to_string(o.iterations));
  if (o.mtu != 0) add("-m", std::to_string(o.mtu));
  if (o.traffic_class >= 0) w.push_back(fmt::format("--tclass={}", o.traffic_class));
  if (o.sl >= 0) w.push_back(fmt::format("--sl={}", o.sl));
  if (o.inline_bytes >= 0) add("-I", std::to_string(o.inline_bytes));
  if (o.bidirectional) w.push_back("-b");
  if (o.ud) add("-c", "UD");
  if (o.rate_gbps > 0) {
    w.push_back(fmt::format("--rate_limit={}", o.rate_gbps));
    w.push_back("--rate_units=g");
    w.push_back("--rate_limit_type=SW");
  }
  add("-p", std::to_string(o.tcp_port));
  w.push_back("--report_gbits");
  if (!o.json_file.empty()) {
    w.push_back("--out_json");
    w.push_back("--out_json_file=" + o.json_file);
  }
  if (!o.server.empty()) w.push_back(o.server);
  return w;
}

}  // namespace rocehil::perftest
