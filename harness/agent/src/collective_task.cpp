#include "collective_task.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "results.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/collective_data.hpp"
#include "rocehil/traffic/qp_scaling.hpp"
#include "soft_qp_budget.hpp"

namespace rocehil::agent {

namespace {

traffic::PlanOptions plan_options(const SetupRequest& s) {
  const CollectiveSetup& c = *s.collective;
  return {.pattern = *traffic::pattern_from_name(c.pattern),
          .ranks = static_cast<int>(c.ranks),
          .bytes = s.message_bytes,
          .ranks_per_host = static_cast<int>(c.ranks_per_host),
          .pipeline = static_cast<int>(c.pipeline),
          .seed = c.seed};
}

traffic::QpScaling scaling_of(const SetupRequest& s) {
  return {.qps = s.qps, .strategy = *traffic::qp_strategy_from_name(s.collective->strategy)};
}

}  // namespace

AgentCollective::AgentCollective(traffic::Provider& provider, const SetupRequest& setup)
    : provider_(provider), setup_(setup), plan_(traffic::make_plan(plan_options(setup))) {
  const int rank = static_cast<int>(setup.collective->rank);
  plan_->peers(rank, peers_);
  const std::uint64_t qps = std::uint64_t{peers_.size()} * setup.qps;
  if (qps > max_agent_qps)
    throw input_error(fmt::format(
        "setup: {} rank {} of {} talks to {} peers x {} qps per connection = {} QPs, more than "
        "an agent takes ({} in all): lower qps to {} or less, or use a pattern with fewer peers",
        setup.collective->pattern, rank, setup.collective->ranks, peers_.size(), setup.qps, qps,
        max_agent_qps, max_agent_qps / peers_.size()));
  // A soft QP is a socket: refused here with the numbers, not by the Nth socket() failing.
  if (provider_.name() == "soft")
    if (const auto why = make_room_for_soft_qps(static_cast<std::uint32_t>(qps)))
      throw input_error(*why);
  const traffic::QpScaling scaling = scaling_of(setup);
  const std::vector<std::uint32_t> send_depths = traffic::send_depths(*plan_, rank, scaling);
  const std::vector<std::uint32_t> receive_depths = traffic::receive_depths(*plan_, rank, scaling);
  region_ = provider_.register_memory(plan_->region_bytes());
  if (region_.data != nullptr) {
    std::fill_n(region_.data, region_.length, std::byte{0});
    traffic::fill_inputs(*plan_, rank, {region_.data, region_.length});
  }
  // One completion for every WR any QP can have outstanding, or the CQ overruns and stops them all.
  std::uint64_t sends = 0, receives = 0;
  for (const std::uint32_t d : send_depths) sends += std::uint64_t{d} * setup.qps;
  for (const std::uint32_t d : receive_depths) receives += std::uint64_t{d} * setup.qps;
  const std::uint64_t cq_depth = sends + receives;
  if (cq_depth > traffic::max_cq_depth)
    throw input_error(fmt::format(
        "setup: rank {} has {} QPs with tx {} + rx {} = {} completions outstanding at most, more "
        "than a ConnectX CQ holds ({}): use fewer qps per connection",
        rank, qps, sends, receives, cq_depth, traffic::max_cq_depth));
  cq_ = provider_.create_cq(static_cast<std::uint32_t>(cq_depth));
  // Ports drawn from the seed spread QPs over ECMP paths the same way every run, where the NIC
  // takes them; a NIC that cannot (rxe, a ConnectX without mlx5 direct verbs) chooses its own,
  // and the run's records say 0. Ports the suite pinned are never dropped: create_qp refuses
  // them with the reason.
  auto ports = traffic::udp_source_ports(setup.collective->sport_seed, rank, qps, setup.udp_sports);
  if (setup.udp_sports.empty() && !provider_.udp_sport_unsupported().empty())
    std::fill(ports.begin(), ports.end(), std::uint16_t{0});
  // QP i is QP i % qps of its connection (peer by peer), which picks its class.
  const auto class_of = [&](std::size_t i) { return traffic_class_of_qp(setup, i % setup.qps); };
  for (std::size_t i = 0; i < qps; ++i)
    qps_.push_back(provider_.create_qp(*cq_, {.type = traffic::QpType::rc,
                                              .max_send_wr = send_depths[i / setup.qps],
                                              .max_recv_wr = receive_depths[i / setup.qps],
                                              .mtu = setup.mtu,
                                              .max_inline = 0,
                                              .traffic_class = class_of(i),
                                              .sl = setup.sl,
                                              .udp_sport = ports[i],
                                              .retry_count = setup.retry_count,
                                              .ack_timeout_us = setup.ack_timeout_us}));
}

AgentCollective::~AgentCollective() {
  // The runner refers to the QPs, which refer to the CQ: release in reverse, memory last.
  runner_.reset();
  qps_.clear();
  cq_.reset();
  if (region_.length > 0) provider_.deregister_memory(region_);
}

std::vector<PeerEndpoint> AgentCollective::endpoints() const {
  std::vector<PeerEndpoint> out;
  for (const auto& qp : qps_)
    out.push_back({.endpoint = qp->local_endpoint(),
                   .remote_address = region_.remote_address,
                   .rkey = region_.rkey});
  return out;
}

void AgentCollective::connect(const std::vector<PeerEndpoint>& peers) {
  if (peers.size() != qps_.size())
    throw input_error(fmt::format(
        "connect: {} peers for {} QPs; give one per QP in the order setup listed them (peer by "
        "peer in ascending rank, {} each)",
        peers.size(), qps_.size(), setup_.qps));
  std::vector<traffic::PeerConnection> connections;
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    traffic::PeerConnection c{.peer = peers_[p], .qps = {}, .remote_address = 0, .rkey = 0};
    for (std::uint32_t q = 0; q < setup_.qps; ++q) {
      const std::size_t i = p * setup_.qps + q;
      qps_[i]->connect(peers[i].endpoint);
      c.qps.push_back(qps_[i].get());
      // Every QP of a peer exposes the same region.
      c.remote_address = peers[i].remote_address;
      c.rkey = peers[i].rkey;
    }
    connections.push_back(std::move(c));
  }
  runner_ = std::make_unique<traffic::CollectiveRunner>(
      *plan_, static_cast<int>(setup_.collective->rank),
      traffic::CollectiveConfig{.scaling = scaling_of(setup_)}, *cq_, region_,
      std::move(connections));
  runner_->prepare();
}

ResultsEvent AgentCollective::run(const StartRequest& start, traffic::LiveProgress& progress,
                                  const std::atomic<bool>& stop) {
  ResultsEvent results;
  results.workload = Workload::collective;
  if (broken_ || !runner_) {
    results.errors = 1;
    results.first_error = broken_ ? "an earlier run was stopped or failed midway: send setup again"
                                  : "the QPs are not connected: send connect first";
    return results;
  }
  const auto began = std::chrono::steady_clock::now();
  const traffic::CollectiveResult r = runner_->run({.warmup_iterations = start.warmup_iterations,
                                                    .iterations = start.iterations,
                                                    .progress = &progress},
                                                   stop);
  results.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  results.stopped = r.stopped;
  results.messages = r.iterations;
  results.bytes = r.bytes_sent;
  if (!r.iteration_end_ns.empty() && r.iteration_end_ns.back() > r.start_ns) {
    const double s = static_cast<double>(r.iteration_end_ns.back() - r.start_ns) / 1e9;
    results.gbps = static_cast<double>(r.bytes_sent) * 8 / s / 1e9;
    results.messages_per_s = static_cast<double>(r.iterations) / s;
  }
  results.errors = r.errors;
  results.first_error = r.first_error;
  results.first_error_status = r.first_error_status;
  add_qp_results(results, r.per_qp);
  add_qp_classes(results, qps_, setup_);
  CollectiveReport report{.iterations = r.iterations,
                          .start_ns = r.start_ns,
                          .iteration_end_ns = r.iteration_end_ns,
                          .wait_ns = r.wait_ns,
                          .step_ns = r.step_ns,
                          .bytes_sent = r.bytes_sent,
                          .bytes_received = r.bytes_received,
                          .output_crc32 = {}};
  fold_step_waits(report, plan_->pattern() == traffic::Pattern::pairwise);
  const bool complete = !r.stopped && r.errors == 0;
  if (first_run_ && complete && region_.data != nullptr)
    report.output_crc32 = traffic::output_crc32(*plan_, static_cast<int>(setup_.collective->rank),
                                                {region_.data, region_.length});
  first_run_ = false;
  broken_ = !complete;
  results.collective = std::move(report);
  return results;
}

}  // namespace rocehil::agent
