// A test driver for the soft provider: two providers in one process, on two local addresses,
// move data between a QP on each and print what both QPs counted, as JSON. The system tests run
// it under tcpdump, tshark, scapy and nftables to check the wire against independent tools.
//
//   soft_transfer --from 127.0.0.1 --to 127.0.0.2 --op write --bytes 65536 --messages 100
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/provider.hpp"

using namespace rocehil::traffic;

namespace {

nlohmann::json counters_json(const QpCounters& c) {
  return {{"packets_sent", c.packets_sent},
          {"bytes_sent", c.bytes_sent},
          {"packets_received", c.packets_received},
          {"bytes_received", c.bytes_received},
          {"retransmitted_packets", c.retransmitted_packets},
          {"timeouts", c.timeouts},
          {"naks_sent", c.naks_sent},
          {"naks_received", c.naks_received},
          {"cnps_sent", c.cnps_sent},
          {"cnps_handled", c.cnps_handled},
          {"ce_received", c.ce_received},
          {"out_of_sequence", c.out_of_sequence},
          {"rate_gbps", c.rate_gbps}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("soft provider transfer for system tests");
  std::string from = "127.0.0.1", to = "127.0.0.2", op_name = "write";
  std::uint32_t bytes = 65536, messages = 10, mtu = 1024, timeout_us = 20000;
  int tos = 0;
  app.add_option("--from", from);
  app.add_option("--to", to);
  app.add_option("--op", op_name)->check(CLI::IsMember({"write", "write_imm", "read", "send"}));
  app.add_option("--bytes", bytes);
  app.add_option("--messages", messages);
  app.add_option("--mtu", mtu);
  app.add_option("--tos", tos);
  app.add_option("--ack-timeout-us", timeout_us);
  CLI11_PARSE(app, argc, argv);
  try {
    ProviderOptions requester_options, responder_options;
    requester_options.address = from;
    responder_options.address = to;
    auto requester = make_provider("soft", requester_options);
    auto responder = make_provider("soft", responder_options);
    auto cq_a = requester->create_cq(4096);
    auto cq_b = responder->create_cq(4096);
    QpOptions o;
    o.mtu = mtu;
    o.traffic_class = static_cast<std::uint8_t>(tos);
    o.ack_timeout_us = timeout_us;
    auto a = requester->create_qp(*cq_a, o);
    auto b = responder->create_qp(*cq_b, o);
    a->connect(b->local_endpoint());
    b->connect(a->local_endpoint());
    const MemoryRegion src = requester->register_memory(bytes);
    const MemoryRegion dst = responder->register_memory(bytes);
    std::mt19937 random(42);
    const MemoryRegion& filled = op_name == "read" ? dst : src;
    for (std::uint32_t i = 0; i < bytes; ++i) filled.data[i] = static_cast<std::byte>(random());

    const Opcode op = op_name == "read"        ? Opcode::read
                      : op_name == "send"      ? Opcode::send
                      : op_name == "write_imm" ? Opcode::write_with_imm
                                               : Opcode::write;
    const bool consumes_receive = op == Opcode::send || op == Opcode::write_with_imm;
    std::array<Completion, 64> wc{};
    std::uint32_t done = 0, failed = 0, received = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::uint32_t m = 0; m < messages; ++m) {
      if (consumes_receive) {
        RecvRequest r{.wr_id = m, .local = &dst, .length = bytes};
        b->post_recv({&r, 1});
      }
      SendRequest wr{.wr_id = m,
                     .opcode = op,
                     .local = &src,
                     .length = bytes,
                     .remote_address = dst.remote_address,
                     .rkey = dst.rkey,
                     .imm = m};
      a->post_send({&wr, 1});
      std::uint32_t this_one = 0;
      while (this_one == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
        for (std::size_t i = 0, n = cq_a->poll(wc); i < n; ++i) {
          ++this_one;
          (wc[i].status == WcStatus::success ? done : failed) += 1;
        }
        for (std::size_t i = 0, n = cq_b->poll(wc); i < n; ++i) received += 1;
      }
      if (this_one == 0) break;
    }
    // Let the last ACKs and receive completions through.
    for (int i = 0; i < 1000; ++i) {
      for (std::size_t k = 0, n = cq_b->poll(wc); k < n; ++k) received += 1;
      cq_a->poll(wc);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool intact = std::memcmp(src.data, dst.data, bytes) == 0;
    const nlohmann::json out = {{"op", op_name},
                                {"bytes", bytes},
                                {"messages", messages},
                                {"completed", done},
                                {"failed", failed},
                                {"receives", received},
                                {"data_intact", intact},
                                {"seconds", seconds},
                                {"requester",
                                 {{"qpn", a->qpn()},
                                  {"udp_sport", a->local_endpoint().udp_sport},
                                  {"counters", counters_json(a->counters())}}},
                                {"responder",
                                 {{"qpn", b->qpn()},
                                  {"udp_sport", b->local_endpoint().udp_sport},
                                  {"counters", counters_json(b->counters())}}}};
    fmt::print("{}\n", out.dump());
    return done == messages && intact ? 0 : 1;
  } catch (const rocehil::Error& e) {
    fmt::print(stderr, "soft_transfer: {}\n", e.what());
    return 3;
  }
}
