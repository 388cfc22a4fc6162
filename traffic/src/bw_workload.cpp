// The bandwidth workload: a stream of messages on every connection, tx_depth deep, measured after
// a warm-up. Nothing here allocates once the run has started.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>

#include "rocehil/traffic/pacing.hpp"
#include "rocehil/traffic/workload.hpp"

namespace rocehil::traffic {

namespace {

using Clock = std::chrono::steady_clock;

// wr_id = connection index << 32 | a sequence number, so a completion finds its connection.
std::uint64_t make_wr_id(std::size_t connection, std::uint64_t sequence) {
  return static_cast<std::uint64_t>(connection) << 32 | (sequence & 0xffffffffu);
}
std::size_t connection_of(std::uint64_t wr_id) {
  return static_cast<std::size_t>(wr_id >> 32);
}

bool consumes_receive(Opcode op) {
  return op == Opcode::send || op == Opcode::write_with_imm;
}

// Keeps the receive ring of connection `c` full again after a receive completed.
void repost_receive(std::vector<Connection>& connections, std::uint64_t wr_id,
                    std::uint32_t message_bytes) {
  const std::size_t c = connection_of(wr_id);
  if (c >= connections.size()) return;
  const RecvRequest r{.wr_id = wr_id,
                      .local = connections[c].local,
                      .local_offset = connections[c].receive_offset,
                      .length = message_bytes};
  connections[c].qp->post_recv({&r, 1});
}

// Receives for a full window and more on every QP, so the peer's requester never meets RNR.
void post_receive_rings(std::vector<Connection>& connections, const BwConfig& config) {
  const std::uint32_t keep_posted = std::max<std::uint32_t>(config.tx_depth + 16, 32);
  for (std::size_t c = 0; c < connections.size(); ++c)
    for (std::uint32_t k = 0; k < keep_posted; ++k) {
      const RecvRequest r{.wr_id = make_wr_id(c, k),
                          .local = connections[c].local,
                          .local_offset = connections[c].receive_offset,
                          .length = config.message_bytes};
      if (connections[c].qp->post_recv({&r, 1}) != PostResult::ok) break;
    }
}

void add_progress(LiveProgress* progress, std::uint64_t messages, std::uint64_t bytes) {
  if (progress == nullptr || messages == 0) return;
  progress->messages.fetch_add(messages, std::memory_order_relaxed);
  progress->bytes.fetch_add(bytes, std::memory_order_relaxed);
}

struct Flight {
  std::uint32_t outstanding = 0;
  std::uint64_t posted = 0;
  std::uint64_t completed = 0;  // completions so far: a QP's come in the order it posted
  // Iterations mode: the first message posted after the warm-up. Those before it may complete
  // after the warm-up ends; they are not among the messages asked for.
  std::uint64_t first_measured = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t measured_messages = 0;
  bool failed = false;
  StallWatch stall;
};

}  // namespace

void note_failure(const Completion& completion, std::uint64_t& errors, std::string& first_error,
                  std::optional<WcStatus>& first_error_status) {
  const bool first = errors++ == 0;
  const bool names_a_cause = first_error_status == WcStatus::flushed &&
                             completion.status != WcStatus::flushed &&
                             completion.status != WcStatus::success;
  if (!first && !names_a_cause) return;
  first_error = describe_failure(completion);
  first_error_status = completion.status;
}

BwResult run_bw_requester(CompletionQueue& cq, std::vector<Connection>& connections,
                          const BwConfig& config, const std::atomic<bool>& stop) {
  BwResult result;
  std::vector<Flight> flights(connections.size());
  std::array<Completion, 64> wc{};
  std::array<SendRequest, 64> batch{};
  const auto start = Clock::now();
  const bool by_volume = config.messages_per_qp != 0;
  // By volume every message is measured: the volume asked is the volume timed.
  const auto measure_from =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(by_volume ? 0.0 : config.warmup_seconds));
  const auto run_until = measure_from + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(config.seconds));
  auto last_counted = measure_from;
  std::uint64_t measured_posted = 0;  // iterations mode: messages posted after warm-up
  bool started_until_end = false;     // duration mode: posting ran until run_until
  bool cq_failed = false;
  const auto lost_after = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(config.lost_after_seconds));
  bool posting = true;
  // Paced, the bucket is shared by every connection and the scan starts after the connection
  // that posted last, so no QP is always first to the tokens (unpaced, `rotor` stays 0).
  const double message_bits = 8.0 * config.message_bytes;
  TokenBucket bucket =
      config.rate_bps > 0
          ? TokenBucket(config.rate_bps, pacing_burst_bits(config.rate_bps, config.message_bytes))
          : TokenBucket{};
  std::size_t rotor = 0;
  // The bucket refused a message the queues had room for at the last turn, at held_at_ns: the
  // time to this turn is time the pacer, not the sender, held the rate.
  bool held = false;
  std::uint64_t held_at_ns = 0;
  double overflow_from = -1;  // the bucket's lost bits when the measured time began
  std::uint64_t last_turn_ns = 0;
  const bool serve_receives = config.serve_peer && consumes_receive(config.opcode);
  if (serve_receives && !config.receives_posted) post_receive_rings(connections, config);

  while (true) {
    const auto now = Clock::now();
    if (stop.load(std::memory_order_relaxed)) posting = false;
    if (by_volume) {
      bool owed = false;  // a connection that has not posted its volume, and can
      for (const Flight& f : flights) owed |= !f.failed && f.posted < config.messages_per_qp;
      if (!owed) posting = false;
    } else if (config.iterations == 0 && now >= run_until) {
      posting = false;
      started_until_end = true;
    }
    if (!by_volume && config.iterations != 0 && now >= measure_from &&
        measured_posted >= config.iterations)
      posting = false;
    bool any_alive = false;
    for (const Flight& f : flights) any_alive |= !f.failed;
    if (!any_alive) posting = false;
    const auto now_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count());
    if (bucket.paced() && last_turn_ns != 0)
      bucket.widen_burst(burst_for_gap(config.rate_bps, now_ns - last_turn_ns));
    last_turn_ns = now_ns;
    if (held && now >= measure_from) result.pacer_held_ns += now_ns - held_at_ns;
    if (bucket.paced() && now >= measure_from && overflow_from < 0)
      overflow_from = bucket.overflowed_bits();
    held = false;
    bool posted_any = false;
    if (posting) {
      for (std::size_t i = 0; i < connections.size(); ++i) {
        const std::size_t c = (rotor + i) % connections.size();
        Flight& f = flights[c];
        if (f.failed) continue;
        std::size_t n = std::min<std::size_t>(batch.size(), config.tx_depth - f.outstanding);
        if (by_volume)
          n = std::min<std::uint64_t>(n, config.messages_per_qp - f.posted);
        else if (config.iterations != 0 && now >= measure_from)
          n = std::min<std::uint64_t>(n, config.iterations - measured_posted);
        if (bucket.paced()) {
          std::size_t allowed = 0;
          while (allowed < n && bucket.try_take(message_bits, now_ns)) ++allowed;
          if (allowed < n) {
            held = true;
            held_at_ns = now_ns;
          }
          n = allowed;
          if (n > 0) rotor = c + 1;
        }
        for (std::size_t k = 0; k < n; ++k)
          batch[k] = {.wr_id = make_wr_id(c, f.posted + k),
                      .opcode = config.opcode,
                      .local = connections[c].local,
                      .length = config.message_bytes,
                      .remote_address = connections[c].remote_address,
                      .rkey = connections[c].rkey,
                      .imm = static_cast<std::uint32_t>(f.posted + k)};
        if (n == 0) continue;
        if (connections[c].qp->post_send({batch.data(), n}) != PostResult::ok) {
          bucket.put_back(message_bits * static_cast<double>(n));  // nothing of it left
          continue;
        }
        if (now >= measure_from && f.first_measured == std::numeric_limits<std::uint64_t>::max())
          f.first_measured = f.posted;
        f.stall.posted(now_ns, f.outstanding == 0);
        f.outstanding += static_cast<std::uint32_t>(n);
        f.posted += n;
        posted_any = true;
        if (now >= measure_from) measured_posted += n;
      }
    }
    const std::size_t got = cq.poll(wc);
    // Paced and waiting for tokens with nothing completing: give the CPU away until they come
    // (soft: until a packet or a timer needs the poll), rather than spin beside the peer.
    if (bucket.paced() && posting && !posted_any && got == 0)
      if (const std::uint64_t wait = bucket.wait_ns(message_bits, now_ns); wait > 0)
        cq.wait_for_work(std::chrono::microseconds(std::min<std::uint64_t>(wait / 1000, 200)));
    if (got == 0 && !cq.failure().empty()) {
      if (result.errors++ == 0) result.first_error = cq.failure();
      cq_failed = true;  // what was outstanding can no longer be told
      break;
    }
    const auto polled_at = Clock::now();
    const auto polled_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(polled_at - start).count());
    std::uint64_t completed = 0;
    for (std::size_t i = 0; i < got; ++i) {
      if (wc[i].opcode == Opcode::recv) {  // the peer's traffic, in a bidirectional run
        if (serve_receives && wc[i].status == WcStatus::success)
          repost_receive(connections, wc[i].wr_id, config.message_bytes);
        continue;
      }
      const std::size_t c = connection_of(wc[i].wr_id);
      if (c >= flights.size()) continue;
      Flight& f = flights[c];
      if (f.outstanding > 0) --f.outstanding;
      const std::uint64_t ordinal = f.completed++;
      if (wc[i].status != WcStatus::success) {
        note_failure(wc[i], result.errors, result.first_error, result.first_error_status);
        f.failed = true;
        f.outstanding = 0;  // an errored QP flushes everything; nothing more will come
        continue;
      }
      ++completed;
      f.stall.completed(polled_ns);
      const bool measured = by_volume                ? true
                            : config.iterations != 0 ? ordinal >= f.first_measured
                                                     : polled_at >= measure_from;
      if (measured) {
        ++f.measured_messages;
        last_counted = polled_at;
      }
    }
    add_progress(config.progress, completed, completed * config.message_bytes);
    bool in_flight = false;
    for (const Flight& f : flights) in_flight |= f.outstanding > 0;
    if (!posting && !in_flight) break;
    if (!posting && polled_at - last_counted > lost_after) break;  // lost for good
  }

  // Work posted that never completed is lost, not merely unmeasured: a peer whose link went down
  // under a NIC that retries for ever (rxe at retry_cnt 7; the provider asks it for 6) leaves its
  // requests outstanding with no error completion, and the run must not read as clean.
  for (std::size_t c = 0; c < connections.size(); ++c) {
    const Flight& f = flights[c];
    if (cq_failed || f.failed || f.outstanding == 0) continue;
    if (result.errors++ == 0)
      result.first_error = fmt::format(
          "QP {:#x}: {} requests got no completion, none for {:.1f} s (the path or the peer is "
          "gone, and the NIC did not fail them)",
          connections[c].qp->qpn(), f.outstanding,
          std::chrono::duration<double>(Clock::now() - last_counted).count());
  }
  // A run by time is measured over all of its time: a stall inside it lowers the rate, instead
  // of ending the window at the last completion.
  const auto measured_until = !by_volume && config.iterations == 0 && started_until_end
                                  ? std::max(last_counted, run_until)
                                  : last_counted;
  result.seconds = std::chrono::duration<double>(measured_until - measure_from).count();
  // The last span counted runs to the turn that saw the time was up, a little past the window.
  const auto window_ns = static_cast<std::uint64_t>(std::max(result.seconds, 0.0) * 1e9);
  result.pacer_held_ns = std::min(result.pacer_held_ns, window_ns);
  result.pacer_burst_bits = bucket.burst_bits();
  if (bucket.paced() && overflow_from >= 0)
    result.pacer_lost_ns =
        std::min(window_ns, static_cast<std::uint64_t>((bucket.overflowed_bits() - overflow_from) /
                                                       config.rate_bps * 1e9));
  const auto ended_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  for (std::size_t c = 0; c < connections.size(); ++c) {
    QpBwResult q;
    flights[c].stall.ended(ended_ns, !flights[c].failed && flights[c].outstanding > 0);
    q.longest_stall = flights[c].stall.longest();
    q.qpn = connections[c].qp->qpn();
    q.udp_sport = connections[c].qp->local_endpoint().udp_sport;
    q.messages = flights[c].measured_messages;
    q.bytes = q.messages * config.message_bytes;
    q.gbps = result.seconds > 0 ? static_cast<double>(q.bytes) * 8 / result.seconds / 1e9 : 0;
    q.counters = connections[c].qp->counters();
    result.messages += q.messages;
    result.bytes += q.bytes;
    result.per_qp.push_back(q);
  }
  if (result.seconds > 0) {
    result.gbps = static_cast<double>(result.bytes) * 8 / result.seconds / 1e9;
    result.messages_per_s = static_cast<double>(result.messages) / result.seconds;
  }
  return result;
}

bool post_bw_receive_rings(std::vector<Connection>& connections, const BwConfig& config) {
  if (!consumes_receive(config.opcode)) return false;
  post_receive_rings(connections, config);
  return true;
}

std::uint64_t serve(CompletionQueue& cq, std::vector<Connection>& connections,
                    const BwConfig& config, const std::atomic<bool>& stop) {
  const bool receives = consumes_receive(config.opcode);
  if (receives && !config.receives_posted) post_receive_rings(connections, config);
  std::array<Completion, 64> wc{};
  std::uint64_t received = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const std::size_t got = cq.poll(wc);
    if (got == 0 && !cq.failure().empty()) break;  // the requester's side reports it
    std::uint64_t batch_messages = 0, batch_bytes = 0;
    for (std::size_t i = 0; i < got; ++i) {
      if (wc[i].opcode != Opcode::recv) continue;
      ++received;
      if (wc[i].status != WcStatus::success) continue;
      ++batch_messages;
      batch_bytes += wc[i].byte_len;
      if (receives) repost_receive(connections, wc[i].wr_id, config.message_bytes);
    }
    add_progress(config.progress, batch_messages, batch_bytes);
  }
  return received;
}

}  // namespace rocehil::traffic
