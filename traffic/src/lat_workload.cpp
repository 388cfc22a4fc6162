// The latency workload: SEND ping-pong on one connection, perftest's send_lat. The one-way
// latency of an exchange is half its round trip, measured on the initiator's clock only.
#include <fmt/format.h>

#include <array>
#include <chrono>

#include "rocehil/traffic/workload.hpp"

namespace rocehil::traffic {

namespace {

using Clock = std::chrono::steady_clock;

// Polls until a completion of `wanted` arrives (true), one fails (false, error noted), or `stop`.
bool wait_for(Opcode wanted, std::uint32_t qpn, CompletionQueue& cq, LatResult& result,
              const std::atomic<bool>& stop) {
  std::array<Completion, 16> wc{};
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  // Spins as perftest does, and only after this many empty polls lets the CQ wait: an RNIC's
  // answer comes within a few of them, while a soft host on a testbed of a few cores waits
  // milliseconds, and two spinning ping-pong sides would take the cores its switches and the
  // other traffic need.
  constexpr int polls_before_waiting = 256;
  int idle_polls = 0;
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < give_up) {
    const std::size_t n = cq.poll(wc);
    if (n == 0 && ++idle_polls >= polls_before_waiting) {
      cq.wait_for_work(std::chrono::microseconds(200));
      idle_polls = 0;
    } else if (n > 0) {
      idle_polls = 0;
    }
    if (n == 0 && !cq.failure().empty()) {
      if (result.errors++ == 0) result.first_error = cq.failure();
      return false;
    }
    bool received = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (wc[i].status != WcStatus::success) {
        note_failure(wc[i], result.errors, result.first_error, result.first_error_status);
        return false;
      }
      received |= wc[i].opcode == wanted;
    }
    if (received) return true;
  }
  if (!stop.load(std::memory_order_relaxed) && result.errors++ == 0)
    // A NIC that retries for ever toward a peer that is gone (rxe at retry_cnt 7) never fails
    // the request: the silence is the error.
    result.first_error = fmt::format(
        "QP {:#x}: no {} within 10 s (the peer or the path is gone, and the NIC did not fail the "
        "request)",
        qpn, wanted == Opcode::recv ? "answer" : "send completion");
  return false;
}

}  // namespace

PostResult post_lat_receive(Connection& connection, std::uint32_t message_bytes) {
  const RecvRequest recv{.wr_id = 1,
                         .local = connection.local,
                         .local_offset = connection.receive_offset,
                         .length = message_bytes};
  return connection.qp->post_recv({&recv, 1});
}

LatResult run_lat(CompletionQueue& cq, Connection& connection, const LatConfig& config,
                  bool initiator, const std::atomic<bool>& stop) {
  LatResult result;
  QueuePair& qp = *connection.qp;
  const RecvRequest recv{.wr_id = 1,
                         .local = connection.local,
                         .local_offset = connection.receive_offset,
                         .length = config.message_bytes};
  // Mostly unsignaled sends, as in perftest's latency tests; every 16th is signaled so that a
  // verbs send queue retires the ones before it.
  SendRequest send{.wr_id = 2,
                   .opcode = Opcode::send,
                   .local = connection.local,
                   .length = config.message_bytes,
                   .signaled = false};
  if (!config.receive_posted &&
      post_lat_receive(connection, config.message_bytes) != PostResult::ok) {
    result.errors = 1;
    result.first_error = "cannot post a receive";
    return result;
  }
  const std::uint64_t total = config.warmup_iterations + config.iterations;
  for (std::uint64_t i = 0; i < total && !stop.load(std::memory_order_relaxed); ++i) {
    send.signaled = i % 16 == 15;
    if (initiator) {
      const auto sent_at = Clock::now();
      if (qp.post_send({&send, 1}) != PostResult::ok) break;
      if (!wait_for(Opcode::recv, qp.qpn(), cq, result, stop)) break;
      qp.post_recv({&recv, 1});
      const auto round_trip =
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent_at);
      if (i >= config.warmup_iterations)
        result.one_way.record(static_cast<std::uint64_t>(round_trip.count()) / 2);
      if (config.progress != nullptr) {
        config.progress->messages.fetch_add(1, std::memory_order_relaxed);
        config.progress->bytes.fetch_add(config.message_bytes, std::memory_order_relaxed);
      }
    } else {
      if (!wait_for(Opcode::recv, qp.qpn(), cq, result, stop)) break;
      qp.post_recv({&recv, 1});
      // The last answer is signaled and waited for: on soft, leaving earlier would leave it
      // unsent, and on verbs it makes sure the initiator has it before the QP goes away.
      const bool last = i + 1 == total;
      send.signaled = send.signaled || last;
      if (qp.post_send({&send, 1}) != PostResult::ok) break;
      if (last && !wait_for(Opcode::send, qp.qpn(), cq, result, stop)) break;
    }
  }
  return result;
}

}  // namespace rocehil::traffic
