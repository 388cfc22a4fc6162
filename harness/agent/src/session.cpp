#include "rocehil/agent/session.hpp"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "capture_task.hpp"
#include "collective_task.hpp"
#include "iperf3_task.hpp"
#include "pacing_setup.hpp"
#include "perftest_task.hpp"
#include "progress_sampler.hpp"
#include "results.hpp"
#include "rocehil/capture/dpdk_source.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/perftest/child_process.hpp"
#include "settings_task.hpp"
#include "soft_qp_budget.hpp"

namespace rocehil::agent {

namespace {

// Receives kept posted per QP by the bw workload (its post_receive_rings), twice over for a
// bidirectional run whose serving tail posts a second ring.
std::uint32_t receive_ring(std::uint32_t tx_depth) {
  return std::max<std::uint32_t>(tx_depth + 16, 32);
}

// The NIC whose counters a run reads: the RDMA device verbs opens (the first when none is
// named, as the provider does) and the netdev that holds the traffic's address.
traffic::NicRef nic_for(const SetupRequest& setup) {
  traffic::NicRef nic{.rdma_device = {}, .port = setup.port, .netdev = {}};
  if (setup.provider == "verbs") {
    nic.rdma_device = setup.device;
    if (nic.rdma_device.empty())
      for (const traffic::DeviceInfo& d : traffic::list_devices())
        if (d.provider == "verbs") {
          nic.rdma_device = d.name;
          break;
        }
  }
  nic.netdev = traffic::netdev_with_address(setup.address);
  if (nic.netdev.empty() && !nic.rdma_device.empty())
    nic.netdev = traffic::netdev_of_rdma_device(nic.rdma_device);
  return nic;
}

}  // namespace

AgentSession::AgentSession(Emit emit, std::string version, std::string host_name)
    : emit_(std::move(emit)), version_(std::move(version)), host_name_(std::move(host_name)) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw system_error("agent: eventfd", errno);
}

AgentSession::~AgentSession() {
  shutdown();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void AgentSession::error(std::optional<std::uint64_t> id, std::string message) {
  emit_(Reply{id, ErrorReply{std::move(message)}});
}

void AgentSession::handle(const Request& request) {
  const auto id = request.id;
  // Capture requests first, in a try of their own: a capture that fails to start must not
  // tear down traffic that is set up.
  if (std::holds_alternative<CaptureStartRequest>(request.body) ||
      std::holds_alternative<CaptureStopRequest>(request.body)) {
    try {
      if (const auto* start = std::get_if<CaptureStartRequest>(&request.body)) {
        on_capture_start(id, *start);
      } else {
        on_capture_stop(id);
      }
    } catch (const std::exception& e) {
      error(id, e.what());
    }
    return;
  }
  try {
    std::visit(
        [&](const auto& body) {
          using T = std::decay_t<decltype(body)>;
          if constexpr (std::is_same_v<T, HelloRequest>) {
            HelloReply hello{.version = version_,
                             .protocol = agent_protocol_version,
                             .host = {},
                             .providers = traffic::built_providers(),
                             .workloads = {"bw", "lat", "collective"},
                             .devices = {},
                             .capture_backends = {"pcap"},
                             .engines = {"rocehil"}};
            if (capture::dpdk_installed()) hello.capture_backends.push_back("dpdk");
            if (perftest::find_on_path("ib_write_bw")) hello.engines.push_back("perftest");
            if (perftest::find_on_path("iperf3")) hello.engines.push_back("iperf3");
            char name[256] = {};
            if (!host_name_.empty())
              hello.host = host_name_;
            else if (gethostname(name, sizeof name - 1) == 0)
              hello.host = name;
            for (traffic::DeviceInfo& d : traffic::list_devices())
              hello.devices.push_back({.name = std::move(d.name),
                                       .provider = std::move(d.provider),
                                       .addresses = std::move(d.addresses),
                                       .detail = std::move(d.detail)});
            emit_(Reply{id, std::move(hello)});
          } else if constexpr (std::is_same_v<T, SetupRequest>) {
            on_setup(id, body);
          } else if constexpr (std::is_same_v<T, ConnectRequest>) {
            on_connect(id, body);
          } else if constexpr (std::is_same_v<T, StartRequest>) {
            on_start(id, body);
          } else if constexpr (std::is_same_v<T, StopRequest>) {
            on_stop(id);
          } else if constexpr (std::is_same_v<T, PerftestRequest>) {
            on_perftest(id, body);
          } else if constexpr (std::is_same_v<T, Iperf3Request>) {
            on_iperf3(id, body);
          } else if constexpr (std::is_same_v<T, SettingsRequest>) {
            // A setting changed under running traffic would make the case measure two fabrics.
            if (state_ == State::running)
              return error(id, "settings: a workload is running; send stop first");
            emit_(Reply{id, handle_settings(body, host_settings_places())});
          } else if constexpr (std::is_same_v<T, EndRequest>) {
            shutdown();
            emit_(Reply{id, EndedReply{}});
          }  // capture requests were handled above
        },
        request.body);
  } catch (const std::exception& e) {
    // Setup failures (no device, address not on this host, out of memory) leave a clean slate.
    if (state_ != State::running) {
      release();
      state_ = State::idle;
    }
    error(id, e.what());
  }
}

void AgentSession::on_setup(std::optional<std::uint64_t> id, const SetupRequest& setup) {
  if (state_ == State::running) return error(id, "setup: a workload is running; send stop first");
  if (setup.role == Role::server && setup.bidirectional)
    return error(id, "setup: a bidirectional run has two clients; use role 'client' on both sides");
  release();
  state_ = State::idle;
  setup_ = setup;
  // A soft QP is a socket: refused here with the numbers, not by the Nth socket() failing. A
  // collective has peers x qps of them, which AgentCollective counts from its plan.
  if (setup.provider == "soft" && setup.workload != Workload::collective)
    if (const auto why = make_room_for_soft_qps(setup.qps)) return error(id, *why);

  nic_ = nic_for(setup);
  nic_before_.reset();
  // The soft provider takes the settings applied to its address (settings_task.hpp); a NIC has
  // its own in force already.
  const bool soft = setup.provider == "soft";
  const SoftQos qos = soft ? soft_qos_for(setup.address, host_settings_places()) : SoftQos{};
  provider_ = traffic::make_provider(
      setup.provider,
      {.device = setup.device,
       .port = setup.port,
       .gid_index = setup.gid_index,
       .address = setup.address,
       .soft_settings = soft ? soft_settings_for(setup.address, host_settings_places())
                             : std::vector<traffic::SoftSetting>{},
       .port_gbps = setup.link_gbps,
       .trust_pcp = qos.trust_pcp,
       .pfc_priorities = qos.pfc_priorities});
  if (setup.workload == Workload::collective) {
    collective_ = std::make_unique<AgentCollective>(*provider_, setup);
    state_ = State::ready;
    return emit_(Reply{id, SetupReply{collective_->endpoints()}});
  }
  const std::uint32_t ring = receive_ring(setup.tx_depth);
  const std::uint32_t send_depth = std::max<std::uint32_t>(setup.tx_depth, 32);
  const std::uint32_t recv_depth = 2 * ring + 16;
  // One completion for every WR any QP can have outstanding, or the CQ overruns and stops them all.
  const std::uint64_t cq_depth = std::uint64_t{setup.qps} * (send_depth + recv_depth);
  if (cq_depth > traffic::max_cq_depth)
    return error(id,
                 fmt::format("setup: {} QPs x (tx {} + rx {}) need a completion queue of {} "
                             "entries, more than a ConnectX CQ holds ({}): lower qps or "
                             "tx_depth",
                             setup.qps, send_depth, recv_depth, cq_depth, traffic::max_cq_depth));
  cq_ = provider_->create_cq(static_cast<std::uint32_t>(cq_depth));

  SetupReply reply;
  memory_.reserve(setup.qps);
  for (std::uint32_t i = 0; i < setup.qps; ++i) {
    // Two halves per QP: the source it sends from, the target the peer writes into.
    const std::size_t bytes = std::size_t{setup.message_bytes} * 2;
    memory_.push_back(setup.gpu >= 0 ? provider_->register_gpu_memory(setup.gpu, bytes)
                                     : provider_->register_memory(bytes));
    fill_buffer(*provider_, memory_.back(), setup.role, i);
    traffic::QpOptions options{
        .type = setup.transport,
        .max_send_wr = send_depth,
        .max_recv_wr = recv_depth,
        .mtu = setup.mtu,
        .max_inline = 0,
        .traffic_class = traffic_class_of_qp(setup, i),
        .sl = setup.sl,
        .udp_sport = setup.udp_sports.empty() ? std::uint16_t{0} : setup.udp_sports[i],
        .retry_count = setup.retry_count,
        .ack_timeout_us = setup.ack_timeout_us};
    qps_.push_back(provider_->create_qp(*cq_, options));
    reply.endpoints.push_back(
        {.endpoint = qps_.back()->local_endpoint(),
         .remote_address = memory_.back().remote_address + setup.message_bytes,
         .rkey = memory_.back().rkey});
  }
  state_ = State::ready;
  emit_(Reply{id, std::move(reply)});
}

void AgentSession::on_connect(std::optional<std::uint64_t> id, const ConnectRequest& connect) {
  if (state_ != State::ready)
    return error(id, state_ == State::idle
                         ? "connect: nothing is set up; send setup first"
                         : "connect: the QPs are already connected; send setup to start over");
  // The counters' window opens before the QPs can carry anything, not at this rank's start: a
  // rank whose start request comes late finds its peers sending (and itself answering) already.
  nic_before_ = read_nic();
  if (collective_) {
    collective_->connect(connect.peers);
    state_ = State::connected;
    return emit_(Reply{id, ConnectedReply{}});
  }
  if (connect.peers.size() != qps_.size())
    return error(id, fmt::format("connect: {} peers for {} QPs; give exactly one peer per QP, in "
                                 "the order setup listed them",
                                 connect.peers.size(), qps_.size()));
  connections_.clear();
  for (std::size_t i = 0; i < qps_.size(); ++i) {
    const PeerEndpoint& peer = connect.peers[i];
    qps_[i]->connect(peer.endpoint);
    connections_.push_back({.qp = qps_[i].get(),
                            .local = &memory_[i],
                            .remote_address = peer.remote_address,
                            .rkey = peer.rkey,
                            .receive_offset = setup_.message_bytes});
  }
  // The NIC's limiter applies to connected QPs (an RTS -> RTS modify).
  pacing_ = pace_sender(setup_, qps_);
  // A ping-pong's first receive is posted before anyone is told to start: the peer's start may
  // come milliseconds before ours (clocks apart, an emulated host), and its first ping would be
  // RNR-NAKed until rnr_retry ran out.
  lat_receive_posted_ = false;
  if (setup_.workload == Workload::lat && !connections_.empty()) {
    if (traffic::post_lat_receive(connections_.front(), setup_.message_bytes) !=
        traffic::PostResult::ok)
      return error(id, "connect: cannot post the ping-pong's first receive");
    lat_receive_posted_ = true;
  }
  // The same for a receiving bw side's rings (SEND, WRITE with immediate).
  bw_receives_posted_ = false;
  if (setup_.workload == Workload::bw && (setup_.role != Role::client || setup_.bidirectional))
    bw_receives_posted_ =
        traffic::post_bw_receive_rings(connections_, {.opcode = setup_.opcode,
                                                      .message_bytes = setup_.message_bytes,
                                                      .tx_depth = setup_.tx_depth});
  state_ = State::connected;
  emit_(Reply{id, ConnectedReply{}});
}

void AgentSession::on_start(std::optional<std::uint64_t> id, const StartRequest& start) {
  if (state_ == State::running) return error(id, "start: a workload is running; send stop first");
  if (state_ != State::connected && state_ != State::finished)
    return error(id, state_ == State::idle
                         ? "start: nothing is set up; send setup first"
                         : "start: the QPs are not connected; send connect first");
  if (setup_.workload == Workload::collective && start.iterations == 0)
    return error(id, "start: a collective needs 'iterations' (measured iterations) > 0");
  if (setup_.workload == Workload::collective && start.iterations > 40000)
    return error(id, fmt::format("start: a collective reports every iteration's end time; at most "
                                 "40000 iterations, got {}",
                                 start.iterations));
  if (setup_.workload != Workload::bw && start.messages_per_qp != 0)
    return error(id,
                 "start: messages_per_qp (a volume per QP) is bw's; lat and collectives run "
                 "'iterations'");
  if (setup_.workload == Workload::lat && start.iterations == 0)
    return error(id, "start: the lat workload needs 'iterations' (ping-pongs to measure) > 0");

  // The first start on these QPs counts from their connect (above); a start after a finished run
  // counts from here, before the agreed start, so the reading delays nobody's traffic.
  if (state_ == State::finished || !nic_before_) nic_before_ = read_nic();
  const std::int64_t now_ns = wall_clock_ns();
  // A side that only answers (a bw server, a ping-pong's responder) serves from now. Waiting for
  // the agreed time on its own clock, which may run behind the requester's (by an emulated
  // host's drift, or NTP's milliseconds), left the requester's first SENDs without a receive:
  // RNR-NAKed until rnr_retry ran out (rc_send on QEMU guests: 0 Gbit/s, 64 errors).
  const bool answers_only = setup_.role == Role::server &&
                            setup_.workload != Workload::collective &&
                            !(setup_.workload == Workload::bw && setup_.bidirectional);
  const std::int64_t begin_ns = answers_only ? now_ns : std::max(start.at_ns, now_ns);
  const auto now = Clock::now();
  started_at_ = now + std::chrono::nanoseconds(begin_ns - now_ns);
  stats_period_ = std::chrono::milliseconds(start.stats_ms);
  next_stats_ = start.stats_ms == 0 ? Clock::time_point::max() : started_at_ + stats_period_;
  last_stats_at_ = started_at_;
  last_stats_bytes_ = 0;
  // A bw sender's delivered bytes over time, or a collective rank's received bytes: what a
  // failover or a stall is read from.
  const bool sampled = (setup_.workload == Workload::bw && setup_.role == Role::client) ||
                       setup_.workload == Workload::collective;
  next_sample_ = sampled ? started_at_ : Clock::time_point::max();
  if (sampled) {
    if (!sampler_) sampler_ = std::make_unique<ProgressSampler>();
    sampler_->begin(begin_ns, timeline_period_us);
  }
  progress_.messages.store(0);
  progress_.bytes.store(0);
  progress_.received_bytes.store(0);
  stop_.store(false);
  worker_done_.store(false);
  published_.reset();
  last_results_.reset();
  start_id_ = id;
  state_ = State::running;
  emit_(Reply{id,
              StartedReply{
                  .at_ns = begin_ns,
                  .late_ns = start.at_ns != 0 && now_ns > start.at_ns ? now_ns - start.at_ns : 0}});
  worker_ = std::thread([this, start, begin_ns] {
    // Asleep to the agreed wall-clock time, and woken by a stop: thousands of ranks waiting on
    // one machine must not wake every few milliseconds while the others take their starts.
    {
      std::unique_lock lock(stop_mutex_);
      stop_wake_.wait_until(
          lock, std::chrono::system_clock::time_point(std::chrono::nanoseconds(begin_ns)),
          [this] { return stop_.load(); });
    }
    probe_.start();
    run_worker(start);
  });
}

void AgentSession::run_worker(StartRequest start) {
  ResultsEvent results;
  results.workload = setup_.workload;
  results.role = setup_.role;
  // Every QP's buffer was registered the same way: the provider tries dma-buf before peer memory.
  if (setup_.gpu >= 0 && !memory_.empty())
    results.gpu_registration = std::string(traffic::to_string(memory_.front().kind));
  try {
    if (collective_) return publish(collective_->run(start, progress_, stop_), false);
    if (setup_.workload == Workload::lat) {
      const traffic::LatConfig config{.message_bytes = setup_.message_bytes,
                                      .iterations = start.iterations,
                                      .warmup_iterations = start.warmup_iterations,
                                      .progress = &progress_,
                                      .receive_posted = std::exchange(lat_receive_posted_, false)};
      const traffic::LatResult lat =
          traffic::run_lat(*cq_, connections_.front(), config, setup_.role == Role::client, stop_);
      add_latency(results, lat, Clock::now() - started_at_);
      return publish(std::move(results), false);
    }
    const traffic::BwConfig config{.opcode = setup_.opcode,
                                   .message_bytes = setup_.message_bytes,
                                   .tx_depth = setup_.tx_depth,
                                   .iterations = start.iterations,
                                   .messages_per_qp = start.messages_per_qp,
                                   .seconds = start.seconds,
                                   .warmup_seconds = start.warmup_seconds,
                                   .serve_peer = setup_.bidirectional,
                                   .progress = &progress_,
                                   .receives_posted = std::exchange(bw_receives_posted_, false),
                                   .rate_bps = engine_rate_bps(pacing_)};
    if (setup_.role == Role::client) {
      const traffic::BwResult sent = traffic::run_bw_requester(*cq_, connections_, config, stop_);
      results.pacing = pacing_;
      if (results.pacing && results.pacing->method == "engine") {
        results.pacing->held_s = static_cast<double>(sent.pacer_held_ns) / 1e9;
        results.pacing->lost_s = static_cast<double>(sent.pacer_lost_ns) / 1e9;
        if (results.pacing->asked_bps > 0)
          results.pacing->burst_s = sent.pacer_burst_bits / results.pacing->asked_bps;
      }
      add_bw(results, sent);
      publish(std::move(results), setup_.bidirectional);
      // The peer may still be sending to us; its packets need our poll to be answered.
      if (setup_.bidirectional) traffic::serve(*cq_, connections_, config, stop_);
      return;
    }
    traffic::serve(*cq_, connections_, config, stop_);
    add_served(results, progress_, Clock::now() - started_at_);
    publish(std::move(results), false);
  } catch (const std::exception& e) {
    // Workloads do not throw; this is a last line so that a bug never takes the agent down.
    results.errors += 1;
    results.first_error = e.what();
    results.first_error_status.reset();  // the error it names is no completion
    publish(std::move(results), false);
  }
}

void AgentSession::publish(ResultsEvent results, bool worker_continues) {
  // The window ends with the measured work (a bidirectional client serves on unmeasured).
  if (probe_.running()) results.cpu = probe_.stop();
  // Events since the last results: setup and the work this answers. (On the worker thread, as
  // the soft provider's poll loop that finds them; verbs' reader keeps them behind a lock.)
  if (provider_) {
    std::vector<traffic::DeviceEvent> events = provider_->take_events();
    results.events.insert(results.events.end(), std::make_move_iterator(events.begin()),
                          std::make_move_iterator(events.end()));
    if (results.events.size() > traffic::max_device_events)
      results.events.resize(traffic::max_device_events);
  }
  {
    // Done is told with the results, under their lock: a tick that took the results between the
    // two would send them unfinished (no checksums: "data not checked"), as once on a starved
    // guest.
    const std::lock_guard lock(results_mutex_);
    if (!worker_continues) worker_done_.store(true);
    published_ = std::move(results);
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = write(wake_fd_, &one, sizeof one);
}

void AgentSession::join_worker() {
  if (worker_.joinable()) worker_.join();
}

void AgentSession::on_capture_start(std::optional<std::uint64_t> id,
                                    const CaptureStartRequest& request) {
  if (!capture_) capture_ = std::make_unique<AgentCapture>(wake_fd_);
  CaptureStartedReply started = capture_->start(request);
  capture_id_ = id;
  emit_(Reply{id, std::move(started)});
}

void AgentSession::on_capture_stop(std::optional<std::uint64_t> id) {
  if (!capture_) capture_ = std::make_unique<AgentCapture>(wake_fd_);
  emit_(Reply{id, capture_->stop()});
}

void AgentSession::tick() {
  std::uint64_t drained = 0;
  [[maybe_unused]] const auto n = read(wake_fd_, &drained, sizeof drained);
  if (capture_) {
    try {
      if (auto summary = capture_->take_finished()) emit_(Reply{capture_id_, std::move(*summary)});
    } catch (const Error& e) {
      error(capture_id_, e.what());
    }
  }
  if (perftest_) {
    if (auto listening = perftest_->take_listening()) emit_(Reply{perftest_id_, *listening});
    if (auto results = perftest_->take_results()) emit_(Reply{perftest_id_, std::move(*results)});
  }
  if (iperf3_) {
    if (auto listening = iperf3_->take_listening()) emit_(Reply{iperf3_id_, *listening});
    if (auto results = iperf3_->take_results()) emit_(Reply{iperf3_id_, std::move(*results)});
  }
  if (state_ != State::running) {
    // No workload polls the provider: the agent does, for the host's other providers' sake.
    if (provider_ && provider_->idle_period().count() > 0) {
      provider_->serve_idle();
      next_idle_service_ = Clock::now() + provider_->idle_period();
    }
    return;
  }
  const auto now = Clock::now();
  if (now >= next_sample_) sample(now);
  if (now >= next_stats_) emit_stats(now);

  std::optional<ResultsEvent> results;
  {
    const std::lock_guard lock(results_mutex_);
    results.swap(published_);
  }
  if (!results) return;
  if (next_sample_ != Clock::time_point::max()) {
    // The sender's work is over: its last sample, then the timeline goes with its results.
    sampler_->finish(since_start_us(now), timeline_bytes());
    results->timeline = sampler_->timeline();
    next_sample_ = Clock::time_point::max();
  }
  if (worker_done_.load()) {
    join_worker();
    finalize(*results);
    state_ = State::finished;
  }
  last_results_ = *results;
  emit_(Reply{start_id_, std::move(*results)});
}

AgentSession::Clock::time_point AgentSession::next_tick() const {
  if (state_ == State::running) return std::min(next_stats_, next_sample_);
  if (provider_ && provider_->idle_period().count() > 0) return next_idle_service_;
  return Clock::time_point::max();
}

std::uint64_t AgentSession::since_start_us(Clock::time_point now) const {
  return now > started_at_
             ? static_cast<std::uint64_t>(
                   std::chrono::duration_cast<std::chrono::microseconds>(now - started_at_).count())
             : 0;
}

void AgentSession::sample(Clock::time_point now) {
  sampler_->add(since_start_us(now), timeline_bytes());
  const auto period = std::chrono::microseconds(sampler_->period_us());
  while (next_sample_ <= now) next_sample_ += period;
}

std::uint64_t AgentSession::timeline_bytes() const {
  // A collective's `bytes` moves once an iteration (a whole allreduce): too coarse to see a
  // stall in; its receive completions move `received_bytes` at every share that arrives.
  const auto& counter =
      setup_.workload == Workload::collective ? progress_.received_bytes : progress_.bytes;
  return counter.load(std::memory_order_relaxed);
}

void AgentSession::emit_stats(Clock::time_point now) {
  const std::uint64_t bytes = progress_.bytes.load(std::memory_order_relaxed);
  const double period = std::chrono::duration<double>(now - last_stats_at_).count();
  StatsEvent stats{
      .t_s = std::chrono::duration<double>(now - started_at_).count(),
      .messages = progress_.messages.load(std::memory_order_relaxed),
      .bytes = bytes,
      .gbps = period > 0 ? static_cast<double>(bytes - last_stats_bytes_) * 8 / period / 1e9 : 0};
  last_stats_bytes_ = bytes;
  last_stats_at_ = now;
  while (next_stats_ <= now) next_stats_ += stats_period_;
  emit_(Reply{start_id_, stats});
}

void AgentSession::on_perftest(std::optional<std::uint64_t> id, const PerftestRequest& request) {
  if (state_ == State::running)
    return error(id, "perftest: a rocehil workload is running; send stop first");
  if (!perftest_) perftest_ = std::make_unique<AgentPerftest>(wake_fd_);
  perftest_->start(request);
  perftest_id_ = id;
}

// iperf3 runs on its own thread beside whatever RDMA traffic the session has: background traffic.
void AgentSession::on_iperf3(std::optional<std::uint64_t> id, const Iperf3Request& request) {
  if (!iperf3_) iperf3_ = std::make_unique<AgentIperf3>(wake_fd_);
  iperf3_->start(request);
  iperf3_id_ = id;
}

void AgentSession::on_stop(std::optional<std::uint64_t> id) {
  // An iperf3 run ends on its own thread, its results (marked stopped) following from tick();
  // a stop that finds nothing else running is answered by those results alone.
  const bool iperf3_stopped = iperf3_ && iperf3_->active();
  if (iperf3_stopped) iperf3_->stop();
  // A perftest run ends on its own thread; its results (marked stopped) follow from tick().
  if (perftest_ && perftest_->active() && state_ != State::running) {
    perftest_->stop();
    return;
  }
  if (iperf3_stopped && state_ != State::running) return;
  if (state_ != State::running && state_ != State::finished)
    return error(id, "stop: nothing was started");
  if (state_ == State::running) {
    request_stop();
    join_worker();
    std::optional<ResultsEvent> results;
    {
      const std::lock_guard lock(results_mutex_);
      results.swap(published_);
    }
    if (results) {
      results->stopped = true;  // it had not ended by itself when the stop came
      last_results_ = std::move(results);
    }
    state_ = State::finished;
  }
  // Final numbers: counters and checksums read now that nothing else touches the QPs.
  if (!last_results_) return error(id, "stop: the workload left no results");
  finalize(*last_results_);
  emit_(Reply{id, *last_results_});
}

traffic::NicCounterSnapshot AgentSession::read_nic() const {
  traffic::NicCounterSnapshot snapshot = traffic::read_nic_counters(nic_);
  // A real netdev's own count of a name wins: the provider's stand in where the netdev has none.
  if (provider_)
    for (auto& [name, value] : provider_->nic_counters())
      snapshot.values.try_emplace("ethtool/" + name, value);
  return snapshot;
}

void AgentSession::finalize(ResultsEvent& results) {
  if (nic_before_) results.nics = {traffic::counter_delta(*nic_before_, read_nic())};
  if (collective_) return;  // its results are complete when the run ends
  add_qp_state(results, *provider_, qps_, memory_, setup_.message_bytes);
  add_qp_classes(results, qps_, setup_);
}

void AgentSession::request_stop() {
  {
    const std::lock_guard lock(stop_mutex_);  // not between the waiter's check and its sleep
    stop_.store(true);
  }
  stop_wake_.notify_all();
}

void AgentSession::release() {
  request_stop();
  join_worker();
  collective_.reset();
  connections_.clear();
  qps_.clear();
  cq_.reset();
  if (provider_)
    for (const traffic::MemoryRegion& region : memory_) provider_->deregister_memory(region);
  memory_.clear();
  provider_.reset();
}

void AgentSession::shutdown() {
  capture_.reset();   // stops a running capture with its files flushed
  perftest_.reset();  // kills a running perftest
  iperf3_.reset();    // and a running iperf3
  release();
  state_ = State::idle;
}

}  // namespace rocehil::agent
