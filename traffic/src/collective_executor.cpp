// One rank of a collective: the plan's steps are checked once, then the loop posts, polls and
// advances without allocating, resolving the steps it works on as it reaches them.
#include "rocehil/traffic/collective_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <optional>

#include "collective_schedule.hpp"
#include "immediate_layout.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace {

// into[i] ^= from[i], a word at a time: the reduction runs at memory speed.
void xor_into(std::byte* into, const std::byte* from, std::uint64_t bytes) {
  std::uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t a = 0, b = 0;
    std::memcpy(&a, into + i, 8);
    std::memcpy(&b, from + i, 8);
    a ^= b;
    std::memcpy(into + i, &a, 8);
  }
  for (; i < bytes; ++i) into[i] ^= from[i];
}

struct QpSlot {
  std::uint32_t qpn = 0;
  std::uint32_t connection = 0;
  std::uint32_t index = 0;  // within the connection
};

}  // namespace

struct CollectiveRunner::State {
  const CollectivePlan& plan;
  int rank;
  CollectiveConfig config;
  ImmediateLayout imm;  // from config.scaling.qps, as the peers build theirs
  CompletionQueue& cq;
  const MemoryRegion& region;
  std::vector<PeerConnection> connections;
  std::optional<CollectiveSchedule> schedule;
  std::uint32_t steps = 0;           // per iteration
  std::vector<QpSlot> by_qpn;        // sorted by qpn
  std::vector<std::uint32_t> depth;  // per connection: receives kept posted on each of its QPs

  // Running state: nothing below grows once run() has started.
  std::vector<std::uint64_t> arrivals;     // per step, over all iterations so far
  std::vector<std::uint32_t> outstanding;  // per step: sends posted, not yet completed
  std::vector<std::uint64_t> round_robin;  // per connection: transfers sent so far
  std::vector<QpBwResult> per_qp;          // connection x qps
  std::uint64_t iteration = 0;             // warm-up included
  std::uint32_t posted_steps = 0;          // steps of this iteration whose sends all went out
  std::uint32_t post_send_index = 0, post_share_index = 0;
  std::uint32_t received_steps = 0;  // leading steps whose receives all arrived
  std::uint32_t done_steps = 0;
  std::int64_t wait_started = 0;
  std::int64_t step_started = 0;  // when done_steps last moved (or the iteration began)
  // Per step of this iteration: when it began to post. A step may go out before the one ahead
  // of it is done (pairwise posts its data as soon as the partner's token is in, while its own
  // token still waits for an ACK); its time then starts here, not when the one ahead ended.
  std::vector<std::int64_t> posting_began;
  LiveProgress* progress = nullptr;  // this run's, when it is watched
  // Bytes received in this poll's completions, added to progress once per poll, not per work
  // request.
  std::uint64_t received_this_poll = 0;

  State(const CollectivePlan& p, int r, CollectiveConfig c, CompletionQueue& q,
        const MemoryRegion& m, std::vector<PeerConnection> conns)
      : plan(p),
        rank(r),
        config(c),
        imm(c.scaling.qps),
        cq(q),
        region(m),
        connections(std::move(conns)) {}

  std::uint32_t qps() const { return config.scaling.qps; }
  QpBwResult& qp_result(std::uint32_t connection, std::uint32_t qp) {
    return per_qp[static_cast<std::size_t>(connection) * qps() + qp];
  }

  void build();
  void post_receive(QueuePair& qp, std::uint64_t wr_id) {
    const RecvRequest r{.wr_id = wr_id, .local = &region, .local_offset = 0, .length = 0};
    qp.post_recv({&r, 1});
  }
  bool may_post(std::uint32_t step) {
    switch (schedule->at(step).after) {
      case After::start: return true;
      case After::earlier_receives: return received_steps >= step;
      case After::through_this_step: return received_steps > step;
    }
    return false;
  }
  // Posts what may go; false on a post error (recorded in `result`).
  bool post_ready(CollectiveResult& result, bool measured);
  bool on_completion(const Completion& c, CollectiveResult& result);
  void advance(std::int64_t now, CollectiveResult& result, bool measured);
  void fail(CollectiveResult& result, std::string message) {
    ++result.errors;
    if (result.first_error.empty()) result.first_error = std::move(message);
  }
};

void CollectiveRunner::State::build() {
  const std::uint32_t k = config.scaling.qps;
  if (k < 1 || k > max_qps_per_connection)
    throw input_error(
        fmt::format("qps per connection {} is outside 1..{}", k, max_qps_per_connection));
  if (plan.region_bytes() > region.length)
    throw input_error(fmt::format("{} rank {} needs a region of {} bytes, got {}",
                                  to_string(plan.pattern()), rank, plan.region_bytes(),
                                  region.length));
  // Step numbers restart every iteration, so it is one iteration's steps that must fit.
  if (static_cast<std::uint64_t>(plan.steps(rank)) > imm.max_steps())
    throw input_error(fmt::format(
        "{} of {} ranks: rank {} has {} steps per iteration, and with {} QPs per connection the "
        "RDMA immediate tells {} apart ({} bits of its 32 name the share): use fewer ranks or "
        "qps, or a smaller pipeline",
        to_string(plan.pattern()), plan.ranks(), rank, plan.steps(rank), k, imm.max_steps(),
        imm.share_bits()));

  for (const auto& c : connections)
    if (c.qps.size() != k)
      throw input_error(fmt::format("connection of rank {} to rank {} has {} QPs, not {}", rank,
                                    c.peer, c.qps.size(), k));
  schedule.emplace(plan, rank, config.scaling, connections);
  steps = schedule->steps();

  for (std::uint32_t c = 0; c < connections.size(); ++c)
    for (std::uint32_t q = 0; q < k; ++q) {
      const QueuePair* qp = connections[c].qps[q];
      by_qpn.push_back({qp->qpn(), c, q});
      QpBwResult r;
      r.qpn = qp->qpn();
      r.udp_sport = qp->local_endpoint().udp_sport;
      per_qp.push_back(r);
    }
  std::sort(by_qpn.begin(), by_qpn.end(),
            [](const QpSlot& a, const QpSlot& b) { return a.qpn < b.qpn; });
  arrivals.assign(steps, 0);
  outstanding.assign(steps, 0);
  posting_began.assign(steps, 0);
  round_robin.assign(connections.size(), 0);
  std::vector<int> peers;
  plan.peers(rank, peers);
  const auto depths = receive_depths(plan, rank, config.scaling);
  for (const auto& c : connections) {
    const auto it = std::lower_bound(peers.begin(), peers.end(), c.peer);
    depth.push_back(it != peers.end() && *it == c.peer
                        ? depths[static_cast<std::size_t>(it - peers.begin())]
                        : 16u);
  }
}

bool CollectiveRunner::State::post_ready(CollectiveResult& result, bool measured) {
  while (posted_steps < steps && may_post(posted_steps)) {
    const StepSchedule& step = schedule->at(posted_steps);
    if (post_send_index == 0 && post_share_index == 0) posting_began[posted_steps] = monotonic_ns();
    while (post_send_index < step.sends.size()) {
      const ScheduledTransfer& item = step.sends[post_send_index];
      const Transfer& t = item.transfer;
      PeerConnection& conn = connections[item.connection];
      const std::uint32_t shares = share_count(config.scaling, t.bytes);
      while (post_share_index < shares) {
        const QpShare sh =
            share(config.scaling, round_robin[item.connection], t.bytes, post_share_index);
        const SendRequest r{.wr_id = static_cast<std::uint64_t>(posted_steps) << 32 |
                                     (static_cast<std::uint64_t>(item.connection) * qps() + sh.qp),
                            .opcode = Opcode::write_with_imm,
                            .local = &region,
                            .local_offset = t.src_offset + sh.offset,
                            .length = static_cast<std::uint32_t>(sh.bytes),
                            .remote_address = conn.remote_address + t.dst_offset + sh.offset,
                            .rkey = conn.rkey,
                            .imm = imm.encode(posted_steps, post_share_index),
                            .signaled = true};
        const PostResult posted = conn.qps[sh.qp]->post_send({&r, 1});
        if (posted == PostResult::queue_full) return true;  // again after the next poll
        if (posted != PostResult::ok) {
          fail(result,
               fmt::format("QP {:#x}: post to rank {} refused ({})", conn.qps[sh.qp]->qpn(),
                           conn.peer, posted == PostResult::invalid ? "invalid" : "not connected"));
          return false;
        }
        ++outstanding[posted_steps];
        if (measured) {
          QpBwResult& q = qp_result(item.connection, sh.qp);
          ++q.messages;
          q.bytes += sh.bytes;
        }
        ++post_share_index;
      }
      ++round_robin[item.connection];
      post_share_index = 0;
      ++post_send_index;
    }
    post_send_index = 0;
    ++posted_steps;
  }
  return true;
}

bool CollectiveRunner::State::on_completion(const Completion& c, CollectiveResult& result) {
  if (c.status != WcStatus::success) {
    note_failure(c, result.errors, result.first_error, result.first_error_status);
    return false;
  }
  if (c.opcode != Opcode::recv) {
    const auto step = static_cast<std::size_t>(c.wr_id >> 32);
    if (step < outstanding.size() && outstanding[step] > 0) --outstanding[step];
    return true;
  }
  const auto slot = std::lower_bound(by_qpn.begin(), by_qpn.end(), c.qpn,
                                     [](const QpSlot& s, std::uint32_t q) { return s.qpn < q; });
  const std::uint32_t step = imm.step(c.imm);
  const std::uint32_t share_index = imm.share(c.imm);
  if (slot == by_qpn.end() || slot->qpn != c.qpn || !c.has_imm || step >= steps) {
    fail(result,
         fmt::format("QP {:#x}: data for step {} that this rank does not have", c.qpn, step));
    return false;
  }
  const StepSchedule& s = schedule->at(step);
  const auto item = std::lower_bound(s.receives.begin(), s.receives.end(), slot->connection,
                                     [](const ScheduledTransfer& r, std::uint32_t connection) {
                                       return r.connection < connection;
                                     });
  if (item == s.receives.end() || item->connection != slot->connection) {
    fail(result, fmt::format("rank {} step {}: data from rank {}, which sends nothing then", rank,
                             step, connections[slot->connection].peer));
    return false;
  }
  const Transfer& t = item->transfer;
  // A share past the transfer's would reduce outside it: a peer with another layout sent it.
  if (share_index >= share_count(config.scaling, t.bytes)) {
    fail(result, fmt::format("QP {:#x}: share {} of a step {} transfer that has {}", c.qpn,
                             share_index, step, share_count(config.scaling, t.bytes)));
    return false;
  }
  const QpShare sh = share(config.scaling, 0, t.bytes, share_index);
  if (t.reduce && config.reduce && region.data != nullptr)
    xor_into(region.data + t.reduce_offset + sh.offset, region.data + t.dst_offset + sh.offset,
             sh.bytes);
  ++arrivals[step];
  received_this_poll += sh.bytes;
  post_receive(*connections[slot->connection].qps[slot->index], c.wr_id);
  return true;
}

void CollectiveRunner::State::advance(std::int64_t now, CollectiveResult& result, bool measured) {
  while (received_steps < steps &&
         arrivals[received_steps] >= (iteration + 1) * schedule->at(received_steps).arrivals_needed)
    ++received_steps;
  while (done_steps < steps && received_steps > done_steps && posted_steps > done_steps &&
         outstanding[done_steps] == 0) {
    if (wait_started != 0) {
      if (measured) result.wait_ns[done_steps] += static_cast<std::uint64_t>(now - wait_started);
      wait_started = 0;
    }
    // A rank that polls late sees several steps end at once: one that was posted before the step
    // ahead of it ended keeps the time since its post rather than reading 0.
    const std::int64_t began = std::min(step_started, posting_began[done_steps]);
    if (measured) result.step_ns[done_steps] += static_cast<std::uint64_t>(now - began);
    step_started = now;
    ++done_steps;
  }
  if (done_steps < steps && received_steps <= done_steps && wait_started == 0) wait_started = now;
}

namespace {

// Transfers between `rank` and each of its peers (plan.peers() order) in one iteration: those it
// receives from them, or those it sends them.
std::vector<std::uint64_t> transfers_per_peer(const CollectivePlan& plan, int rank, bool sends) {
  std::vector<int> peers;
  plan.peers(rank, peers);
  std::vector<std::uint64_t> transfers(peers.size(), 0);
  Step s;
  for (int i = 0; i < plan.steps(rank); ++i) {
    plan.step(rank, i, s);
    for (const auto& t : sends ? s.sends : s.receives)
      ++transfers[static_cast<std::size_t>(std::lower_bound(peers.begin(), peers.end(), t.peer) -
                                           peers.begin())];
  }
  return transfers;
}

// The most work requests one QP of a connection carries in an iteration of `n` transfers: split
// puts a share of every transfer on each QP; round_robin a transfer on one QP in turn, which an
// iteration may start on any QP (one more).
std::uint64_t most_per_qp(const QpScaling& scaling, std::uint64_t n) {
  if (scaling.strategy == QpStrategy::split) return n;
  return n == 0 ? 0 : (n + scaling.qps - 1) / scaling.qps + 1;
}

}  // namespace

std::vector<std::uint32_t> receive_depths(const CollectivePlan& plan, int rank,
                                          const QpScaling& scaling) {
  // A peer that sends nothing (a ring's next rank) still gets a few: a QP without a posted
  // receive is one setup mistake away from RNR.
  std::vector<std::uint32_t> depths;
  for (const auto n : transfers_per_peer(plan, rank, false))
    depths.push_back(static_cast<std::uint32_t>(
        std::min<std::uint64_t>(2 * most_per_qp(scaling, n) + 16, 16384)));
  return depths;
}

std::vector<std::uint32_t> send_depths(const CollectivePlan& plan, int rank,
                                       const QpScaling& scaling) {
  std::vector<std::uint32_t> depths;
  for (const auto n : transfers_per_peer(plan, rank, true))
    depths.push_back(static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(most_per_qp(scaling, n), 1, max_send_depth)));
  return depths;
}

std::uint32_t receive_depth(const CollectivePlan& plan, int rank, const QpScaling& scaling) {
  const auto depths = receive_depths(plan, rank, scaling);
  return depths.empty() ? 16u : *std::max_element(depths.begin(), depths.end());
}

CollectiveRunner::CollectiveRunner(const CollectivePlan& plan, int rank, CollectiveConfig config,
                                   CompletionQueue& cq, const MemoryRegion& region,
                                   std::vector<PeerConnection> connections)
    : state_(std::make_unique<State>(plan, rank, config, cq, region, std::move(connections))) {
  state_->build();
}

CollectiveRunner::~CollectiveRunner() = default;

void CollectiveRunner::prepare() {
  State& st = *state_;
  for (const auto& slot : st.by_qpn)
    for (std::uint32_t i = 0; i < st.depth[slot.connection]; ++i)
      st.post_receive(*st.connections[slot.connection].qps[slot.index], slot.qpn);
}

CollectiveResult CollectiveRunner::run(const CollectiveRun& length, const std::atomic<bool>& stop) {
  State& st = *state_;
  CollectiveResult result;
  result.wait_ns.assign(st.steps, 0);
  result.step_ns.assign(st.steps, 0);
  st.step_started = monotonic_ns();
  result.iteration_end_ns.reserve(length.iterations);
  const std::uint64_t send_bytes = st.schedule->send_bytes();
  const std::uint64_t receive_bytes = st.schedule->receive_bytes();
  for (auto& q : st.per_qp) q.messages = q.bytes = 0;  // this run's own
  st.progress = length.progress;
  // Iterations count on from earlier runs: the arrival counters are cumulative.
  const std::uint64_t measure_from = st.iteration + length.warmup_iterations;
  const std::uint64_t total = measure_from + length.iterations;
  std::array<Completion, 64> wc{};
  if (length.warmup_iterations == 0) result.start_ns = wall_clock_ns();
  bool ok = true;
  unsigned idle_polls = 0;
  while (ok && st.iteration < total) {
    if (stop.load(std::memory_order_relaxed)) {
      result.stopped = true;
      break;
    }
    const bool measured = st.iteration >= measure_from;
    ok = st.post_ready(result, measured);
    const std::size_t n = st.cq.poll(wc);
    if (n == 0 && !st.cq.failure().empty()) {
      st.fail(result, st.cq.failure());
      break;
    }
    for (std::size_t i = 0; ok && i < n; ++i) ok = st.on_completion(wc[i], result);
    if (st.progress != nullptr && st.received_this_poll > 0)
      st.progress->received_bytes.fetch_add(st.received_this_poll, std::memory_order_relaxed);
    st.received_this_poll = 0;
    // Waiting for a peer: after a run of empty polls give the CPU away until there is work,
    // and (soft) keep waiting, one poll between waits, until a completion comes: that is what
    // moves the data when ranks share cores (the testbed puts hundreds on one machine, where a
    // waiting rank that woke for long would take the CPU from the ranks with work). An RNIC's
    // completions do not need the CPU: on verbs a wait is a yield every 64 empty polls. The
    // wait's bound is how late a stop request is seen.
    idle_polls = n == 0 ? std::min(idle_polls + 1, 64u) : 0;
    if (idle_polls == 64 && !st.cq.wait_for_work(std::chrono::milliseconds(100))) idle_polls = 0;
    const std::int64_t now = monotonic_ns();
    st.advance(now, result, measured);
    if (st.done_steps < st.steps) continue;
    // This rank's part of the iteration is done.
    if (measured) {
      result.iteration_end_ns.push_back(wall_clock_ns());
      ++result.iterations;
      result.bytes_sent += send_bytes;
      result.bytes_received += receive_bytes;
      if (length.progress != nullptr) {
        length.progress->messages.fetch_add(1, std::memory_order_relaxed);
        length.progress->bytes.fetch_add(send_bytes, std::memory_order_relaxed);
      }
    }
    ++st.iteration;
    if (st.iteration == measure_from) result.start_ns = wall_clock_ns();
    st.posted_steps = st.received_steps = st.done_steps = 0;
    st.advance(now, result, st.iteration >= measure_from);
  }
  // per_qp is connection by connection, qps each: its index names the QP (no search, which
  // thousands of QPs per connection would make quadratic).
  for (std::size_t c = 0; c < st.per_qp.size(); ++c) {
    QpBwResult& q = st.per_qp[c];
    q.counters = st.connections[c / st.qps()].qps[c % st.qps()]->counters();
    if (!result.iteration_end_ns.empty() && result.iteration_end_ns.back() > result.start_ns)
      q.gbps = static_cast<double>(q.bytes) * 8 /
               static_cast<double>(result.iteration_end_ns.back() - result.start_ns);
  }
  result.per_qp = st.per_qp;
  return result;
}

}  // namespace rocehil::traffic
