#include "traffic/traffic_command.hpp"

#include "traffic/collective_command.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include "rocehil/agent/stdio_loop.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/this_executable.hpp"
#include "rocehil/run/point_to_point.hpp"
#include "rocehil/run/result_json.hpp"
#include "shared/interrupt.hpp"
#include "traffic/in_process_agent.hpp"
#include "traffic/perftest_text.hpp"
#include "traffic/traffic_text.hpp"

namespace rocehil::cli {

namespace {

struct ClientOptions {
  std::string server_host, server_netns;
  bool server_local = false;
  std::string server_address, address;
  remote::SshOptions ssh;
  std::string remote_rocehil;
  std::string provider = "soft", device, server_device;
  int gid_index = -1;
  int ib_port = 1;
  std::string test = "bw", opcode = "write";
  std::uint32_t size = 0, qps = 1, tx_depth = 64, mtu = 1024;
  int tclass = 106;  // DSCP 26 (the common RoCE data class), ECT(0): markable by ECN
  std::uint32_t udp_sport = 0;
  double duration = 2, warmup = 0.2;
  double link_gbps = 0;
  std::uint64_t iterations = 0;
  bool bidirectional = false;
  std::uint32_t stats_ms = 1000;
  bool json = false;
  std::string engine = "rocehil";
  // Given on the command line rather than left at their defaults (for engine perftest, which
  // has no equivalent of some of them and must not ignore them silently).
  bool opcode_given = false, udp_sport_given = false, warmup_given = false, stats_given = false,
       iterations_given = false;
};

bool is_ip_literal(const std::string& text) {
  in6_addr any{};
  return inet_pton(AF_INET, text.c_str(), &any) == 1 ||
         inet_pton(AF_INET6, text.c_str(), &any) == 1;
}

// The source address the kernel would pick toward `peer`: a UDP connect() sends nothing.
std::string source_address_toward(const std::string& peer) {
  sockaddr_storage to{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&to);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&to);
  if (inet_pton(AF_INET, peer.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(4791);
    length = sizeof *v4;
  } else if (inet_pton(AF_INET6, peer.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(4791);
    length = sizeof *v6;
  } else {
    throw input_error(fmt::format("--server-address '{}' is not an IPv4 or IPv6 address", peer));
  }
  const int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_storage local{};
  socklen_t local_length = sizeof local;
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&to), length) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) == 0;
  const int saved = errno;
  if (fd >= 0) close(fd);
  if (!ok)
    throw input_error(
        fmt::format("no route from here to {} ({}); give --address", peer, std::strerror(saved)));
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw =
      local.ss_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
          : &reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr;
  inet_ntop(local.ss_family, raw, text, sizeof text);
  return text;
}

traffic::Opcode parse_opcode(const std::string& name) {
  for (auto op : {traffic::Opcode::write, traffic::Opcode::write_with_imm, traffic::Opcode::send,
                  traffic::Opcode::read})
    if (name == traffic::to_string(op)) return op;
  throw input_error(
      fmt::format("--opcode '{}' is unknown; use write, write_with_imm, send or read", name));
}

run::PointToPointConfig make_config(const ClientOptions& o) {
  run::PointToPointConfig config;
  agent::SetupRequest& c = config.client;
  c.provider = o.provider;
  c.device = o.device;
  c.port = static_cast<std::uint8_t>(o.ib_port);
  c.gid_index = o.gid_index;
  c.address = o.address.empty() ? source_address_toward(o.server_address) : o.address;
  c.workload = o.test == "lat" ? agent::Workload::lat : agent::Workload::bw;
  c.role = agent::Role::client;
  c.opcode = c.workload == agent::Workload::lat ? traffic::Opcode::send : parse_opcode(o.opcode);
  c.qps = c.workload == agent::Workload::lat ? 1 : o.qps;
  c.message_bytes = o.size != 0 ? o.size : c.workload == agent::Workload::lat ? 8 : 65536;
  c.tx_depth = o.tx_depth;
  c.mtu = o.mtu;
  c.link_gbps = o.link_gbps;
  c.traffic_class = static_cast<std::uint8_t>(o.tclass);
  c.bidirectional = o.bidirectional;
  if (o.udp_sport != 0) {
    if (o.udp_sport + c.qps - 1 > 65535)
      throw input_error(
          fmt::format("--udp-sport {} + {} QPs runs past port 65535", o.udp_sport, c.qps));
    for (std::uint32_t i = 0; i < c.qps; ++i)
      c.udp_sports.push_back(static_cast<std::uint16_t>(o.udp_sport + i));
  }
  config.server = c;
  config.server.device = o.server_device;
  config.server.address = o.server_address;
  config.server.udp_sports.clear();
  if (!o.bidirectional) config.server.role = agent::Role::server;
  if (o.udp_sport != 0)
    for (std::uint32_t i = 0; i < c.qps; ++i)
      config.server.udp_sports.push_back(static_cast<std::uint16_t>(o.udp_sport + c.qps + i));

  config.start.seconds = o.duration;
  config.start.warmup_seconds = o.warmup;
  config.start.iterations = o.iterations;
  config.start.stats_ms = o.stats_ms;
  if (c.workload == agent::Workload::lat) {
    if (o.iterations == 0) config.start.iterations = 10000;  // perftest's default for lat
    config.start.warmup_iterations = std::min<std::uint64_t>(1000, config.start.iterations / 10);
  }
  return config;
}

// engine perftest: the same test as perftest's tools run it. lat takes --opcode too (ib_write_lat,
// ib_read_lat, ib_send_lat), default send like rocehil's own lat.
run::PerftestPairConfig make_perftest_config(const ClientOptions& o) {
  for (const auto& [given, flag] :
       {std::pair{o.udp_sport_given, "--udp-sport"}, std::pair{o.warmup_given, "--warmup"},
        std::pair{o.stats_given, "--stats-ms"}})
    if (given)
      throw input_error(
          fmt::format("{} has no perftest equivalent; drop it with --engine perftest", flag));
  const bool lat = o.test == "lat";
  const std::string opcode = lat && !o.opcode_given ? "send" : o.opcode;
  if (opcode == "write_with_imm")
    throw input_error("perftest has no WRITE_WITH_IMM test; use --opcode write, read or send");
  run::PerftestPairConfig config;
  agent::PerftestRequest& c = config.client;
  c.role = agent::Role::client;
  c.tool = opcode + (lat ? "_lat" : "_bw");
  c.device = o.device;
  c.port = static_cast<std::uint8_t>(o.ib_port);
  c.gid_index = o.gid_index;
  c.size = o.size != 0 ? o.size : lat ? 8 : 65536;
  c.qps = lat ? 1 : o.qps;
  if (!lat) c.tx_depth = o.tx_depth;
  if (o.iterations_given && !lat) {
    // rocehil's --iterations counts messages over all QPs, perftest's -n per QP: the same
    // messages in all, or refused.
    if (o.iterations % c.qps != 0)
      throw input_error(fmt::format(
          "--iterations {} over --qps {}: rocehil counts messages over all QPs, perftest's -n "
          "per QP, so with --engine perftest give a multiple of {} ({} or {})",
          o.iterations, c.qps, c.qps, o.iterations / c.qps * c.qps,
          (o.iterations / c.qps + 1) * c.qps));
    c.iterations = o.iterations / c.qps;
  } else if (o.iterations_given)
    c.iterations = o.iterations;
  else if (lat)
    c.iterations = 10000;  // perftest's own default is 1000; rocehil's lat runs 10000
  else                     // perftest takes whole seconds
    c.seconds = static_cast<std::uint32_t>(std::max(1.0, std::ceil(o.duration)));
  c.mtu = o.mtu;
  c.traffic_class = o.tclass;
  c.bidirectional = o.bidirectional;
  c.server = o.server_address;
  config.server = c;
  config.server.role = agent::Role::server;
  config.server.device = o.server_device;
  config.server.server.clear();
  return config;
}

std::unique_ptr<remote::AgentLink> start_server(const ClientOptions& o) {
  if (!o.server_host.empty()) {
    const std::string remote = o.remote_rocehil.empty() ? "rocehil" : o.remote_rocehil;
    return remote::launch_agent(
        remote::ssh_agent_command(o.server_host, o.ssh, {remote, "traffic", "server"}));
  }
  const std::string self = o.remote_rocehil.empty() ? remote::this_executable() : o.remote_rocehil;
  if (!o.server_netns.empty())
    return remote::launch_agent(
        {.name = "netns " + o.server_netns,
         .argv = {"ip", "netns", "exec", o.server_netns, self, "traffic", "server"}});
  return remote::launch_agent({.name = "local process", .argv = {self, "traffic", "server"}});
}

int run_perftest_client(const ClientOptions& o) {
  const run::PerftestPairConfig config = make_perftest_config(o);
  const std::atomic<bool>& interrupted = catch_interrupts();
  auto server = start_server(o);
  auto client = make_in_process_agent(ROCEHIL_VERSION);
  if (!o.json)
    fmt::print("perftest {} between here and {} ({}), the server side first\n", config.client.tool,
               server->name(), config.client.server);
  std::fflush(stdout);
  const run::PerftestPairResult result =
      run::run_perftest_pair(*client, *server, config, {}, interrupted);
  if (o.json)
    fmt::print("{}\n", run::perftest_pair_json(config, result).dump(2));
  else
    fmt::print("{}", format_perftest_pair(result));
  if (result.interrupted || run::perftest_failure(result))
    return static_cast<int>(ExitCode::infrastructure);
  return static_cast<int>(ExitCode::qualified);
}

int run_client_here(ClientOptions o) {
  const int places =
      (o.server_host.empty() ? 0 : 1) + (o.server_netns.empty() ? 0 : 1) + (o.server_local ? 1 : 0);
  if (places != 1)
    throw input_error(
        "say where the server side runs: exactly one of --server HOST (over ssh), "
        "--server-netns NAME or --server-local");
  if (o.server_address.empty()) {
    if (!is_ip_literal(o.server_host))
      throw input_error(
          "--server-address is needed: the IP the server's RoCE NIC uses (the ssh "
          "host name says where to log in, not which NIC carries the traffic)");
    o.server_address = o.server_host;
  }
  if (o.engine == "perftest") return run_perftest_client(o);
  const run::PointToPointConfig config = make_config(o);
  const std::atomic<bool>& interrupted = catch_interrupts();

  auto server = start_server(o);
  auto client = make_in_process_agent(ROCEHIL_VERSION);
  if (!o.json) fmt::print("{}", describe_test(config, server->name()));
  std::fflush(stdout);
  const auto on_stats = [&](const agent::StatsEvent& stats) {
    if (!o.json) fmt::print("{}", format_stats_line(stats));
    std::fflush(stdout);
  };
  const run::PointToPointResult result =
      run::run_point_to_point(*client, *server, config, on_stats, interrupted);
  if (o.json)
    fmt::print("{}\n", run::point_to_point_json(config, result).dump(2));
  else
    fmt::print("{}", format_point_to_point(config, result));
  if (result.interrupted) return static_cast<int>(ExitCode::infrastructure);
  return point_to_point_exit_code(result);
}

// The server side started over ssh never said hello because the shell on the host found no such
// program (its exit status 127): say which flag fixes it, on top of what the host said.
[[noreturn]] void rethrow_with_remedy(const Error& e, const ClientOptions& o) {
  const std::string what = e.what();
  if (o.server_host.empty() || (what.find("(exit status 127)") == std::string::npos &&
                                what.find("command not found") == std::string::npos))
    throw;
  const std::string program = o.remote_rocehil.empty() ? "rocehil" : o.remote_rocehil;
  throw Error(e.exit_code(),
              fmt::format("{}; '{}' is not a program on {}: give --remote-rocehil PATH, the "
                          "rocehil executable there (a testbed's hosts share this machine's "
                          "files; here: --remote-rocehil {}), or start the server in a network "
                          "namespace of this machine with --server-netns NAME",
                          what, program, o.server_host, remote::this_executable()));
}

int run_client(ClientOptions o) {
  try {
    return run_client_here(o);
  } catch (const Error& e) {
    rethrow_with_remedy(e, o);
  }
}

}  // namespace

void add_traffic_command(CLI::App& app, int& exit_code) {
  CLI::App* traffic = app.add_subcommand(
      "traffic",
      "One point-to-point test, perftest style: bandwidth or latency between here and "
      "one other host, over the soft or verbs provider.");
  traffic->require_subcommand(1);
  add_collective_command(*traffic, exit_code);

  CLI::App* server = traffic->add_subcommand(
      "server",
      "The far side of 'traffic client', which starts it over ssh (or in a network "
      "namespace) and talks to it on stdin/stdout; no port is opened.");
  server->footer(
      "\nYou do not normally run this yourself: it is 'rocehil agent' under the name "
      "perftest users look for.\nSee 'rocehil traffic client --help'.");
  server->callback([&exit_code] { exit_code = agent::run_agent_stdio(0, 1, ROCEHIL_VERSION); });

  auto o = std::make_shared<ClientOptions>();
  CLI::App* client = traffic->add_subcommand(
      "client", "Run a bw or lat test from here to a server host and print what it measured.");
  client->add_option("--server", o->server_host,
                     "Start the server side on this host over ssh (BatchMode; keys, not "
                     "passwords)");
  client->add_option("--server-netns", o->server_netns,
                     "Start the server side in this network namespace of this machine");
  client->add_flag("--server-local", o->server_local,
                   "Start the server side as a process on this machine (loopback tests)");
  client->add_option("--server-address", o->server_address,
                     "IP of the server's RoCE NIC (default: --server when it is an IP)");
  client->add_option("--address", o->address,
                     "IP of the local RoCE NIC (default: the kernel's source address toward "
                     "--server-address)");
  client->add_option("--ssh-config", o->ssh.config_file, "ssh -F: an ssh client config file");
  client->add_option("--ssh-user", o->ssh.user, "ssh -l: the remote user");
  client->add_option("--ssh-port", o->ssh.port, "ssh -p: the remote sshd port")
      ->check(CLI::Range(1, 65535));
  client->add_option("--identity", o->ssh.identity, "ssh -i: the private key");
  client->add_option("--remote-rocehil", o->remote_rocehil,
                     "The rocehil executable on the server (default: 'rocehil' on its PATH; "
                     "this executable for --server-netns and --server-local)");
  client->add_option("--provider", o->provider, "soft (RoCEv2 over UDP, no RNIC) or verbs")
      ->check(CLI::IsMember({"soft", "verbs"}));
  client->add_option("--device", o->device, "verbs: the local RDMA device (default: the first)");
  client->add_option("--server-device", o->server_device, "verbs: the server's RDMA device");
  client
      ->add_option("--gid-index", o->gid_index,
                   "verbs: GID index (default: the RoCEv2 GID carrying the address)")
      ->check(CLI::Range(-1, 255));
  client->add_option("--ib-port", o->ib_port, "verbs: the device port")->check(CLI::Range(1, 255));
  client->add_option("--test", o->test, "bw (bandwidth) or lat (ping-pong latency)")
      ->check(CLI::IsMember({"bw", "lat"}));
  client
      ->add_option("--engine", o->engine,
                   "rocehil (its own traffic, soft or verbs) or perftest (Debian's ib_*_bw and "
                   "ib_*_lat on both hosts' RDMA devices; the server's --server-address must be "
                   "IPv4, perftest's handshake is)")
      ->check(CLI::IsMember({"rocehil", "perftest"}));
  client->add_option("--opcode", o->opcode, "bw: write, write_with_imm, send or read")
      ->check(CLI::IsMember({"write", "write_with_imm", "send", "read"}));
  client->add_option("--size", o->size, "Message size in bytes (default: bw 65536, lat 8)")
      ->check(CLI::Range(1u, 1u << 30));
  client->add_option("--qps", o->qps, "bw: QPs (connections spread over ECMP paths by UDP port)")
      ->check(CLI::Range(1u, agent::max_agent_qps));
  client->add_option("--tx-depth", o->tx_depth, "bw: messages in flight per QP")
      ->check(CLI::Range(1, 4096));
  client->add_option("--mtu", o->mtu, "Path MTU: 256, 512, 1024, 2048 or 4096")
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}));
  client
      ->add_option("--link-gbps", o->link_gbps,
                   "soft: the NICs' port speed in Gb/s; both sides pace their QPs to it together "
                   "and start DCQCN there (default 0: not known, QPs start at 100 Gb/s)")
      ->check(CLI::Range(0.0, 10000.0));
  client
      ->add_option("--tclass", o->tclass,
                   "IP traffic class byte, DSCP << 2 | ECN (default 106: DSCP 26, ECT(0))")
      ->check(CLI::Range(0, 255));
  client
      ->add_option("--udp-sport", o->udp_sport,
                   "First UDP source port: client QP i uses it + i, server QP i it + QPs + i "
                   "(default: one free port per QP)")
      ->check(CLI::Range(1, 65535));
  client->add_option("--duration", o->duration, "bw: seconds measured")
      ->check(CLI::Range(0.001, 86400.0));
  client->add_option("--warmup", o->warmup, "bw: seconds before measuring")
      ->check(CLI::Range(0.0, 3600.0));
  client
      ->add_option(
          "--iterations", o->iterations,
          "bw: messages to measure instead of --duration, over all QPs together (perftest's "
          "-n counts per QP: --iterations 3000 --qps 3 is its -n 1000 -q 3, and "
          "--engine perftest converts so); lat: ping-pongs (10000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000'000}));
  client->add_flag("--bidirectional", o->bidirectional, "bw: both sides send at once");
  client->add_option("--stats-ms", o->stats_ms, "Live stats period in ms (0: none)")
      ->check(CLI::Range(0u, 3'600'000u));
  client->add_flag("--json", o->json, "Print the results as JSON (schema_version 1)");
  client->footer(R"(
Examples:
  rocehil traffic client --server-local --server-address 127.0.0.2 --address 127.0.0.1
  rocehil traffic client --server gpu02 --server-address 10.1.2.2 --qps 8 --size 1048576
  rocehil traffic client --server h3 --ssh-config /tmp/tb/ssh/config \
      --server-address 198.18.2.11 --test lat --json
  rocehil traffic client --engine perftest --server gpu02 --server-address 10.1.2.2 \
      --device mlx5_0 --server-device mlx5_0 --qps 8 --duration 5
The server side runs 'rocehil traffic server' there, reached over ssh stdio: no port is opened.
With --engine perftest both sides run Debian's perftest (ib_write_bw, ib_send_lat, ...) from
their agents, the server first on a free TCP port of its own for perftest's handshake.
Exit status: 0 clean (no error completions, every byte intact), 1 errors or corrupt data,
2 bad options or a side refused them, 3 a side died, timed out or Ctrl-C.)");
  client->callback([o, client, &exit_code] {
    o->opcode_given = client->count("--opcode") > 0;
    o->udp_sport_given = client->count("--udp-sport") > 0;
    o->warmup_given = client->count("--warmup") > 0;
    o->stats_given = client->count("--stats-ms") > 0;
    o->iterations_given = client->count("--iterations") > 0;
    exit_code = run_client(*o);
  });
}

}  // namespace rocehil::cli
