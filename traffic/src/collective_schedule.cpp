// One rank's steps, checked once and resolved on demand (see the header for why).
#include "collective_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic {

namespace {

constexpr std::uint64_t max_share_bytes = std::uint64_t{1} << 30;

bool by_connection(const ScheduledTransfer& a, const ScheduledTransfer& b) {
  return a.connection < b.connection;
}

}  // namespace

CollectiveSchedule::CollectiveSchedule(const CollectivePlan& plan, int rank,
                                       const QpScaling& scaling,
                                       const std::vector<PeerConnection>& connections)
    : plan_(plan), rank_(rank), scaling_(scaling) {
  for (std::uint32_t c = 0; c < connections.size(); ++c)
    peer_connections_.emplace_back(connections[c].peer, c);
  // By peer, then connection: the first connection to a peer carries its transfers, as a
  // search in order would find. (std::sort needs no buffer, unlike stable_sort.)
  std::sort(peer_connections_.begin(), peer_connections_.end());
  slot_step_.fill(empty_slot);
  steps_ = static_cast<std::uint32_t>(plan.steps(rank));

  std::size_t most_sends = 0, most_receives = 0;
  StepSchedule check;
  for (std::uint32_t i = 0; i < steps_; ++i) {
    plan_.step(rank_, static_cast<int>(i), scratch_);
    for (const auto& t : scratch_.sends) {
      if (t.bytes > max_share_bytes * scaling_.qps)
        throw input_error(
            fmt::format("a transfer of {} bytes needs more than {} QPs to stay "
                        "under 1 GiB a message",
                        t.bytes, scaling_.qps));
      send_bytes_ += t.bytes;
    }
    for (const auto& t : scratch_.receives) receive_bytes_ += t.bytes;
    for (const auto* list : {&scratch_.sends, &scratch_.receives})
      for (const auto& t : *list)
        if (connection_of(t.peer) == no_connection)
          throw input_error(
              fmt::format("{} rank {} exchanges with rank {} but has no connection to it",
                          to_string(plan_.pattern()), rank_, t.peer));
    fill(check);
    for (std::size_t j = 1; j < check.receives.size(); ++j)
      if (check.receives[j].connection == check.receives[j - 1].connection)
        throw input_error(fmt::format("{} rank {} step {} receives twice from rank {}",
                                      to_string(plan_.pattern()), rank_, i,
                                      check.receives[j].transfer.peer));
    most_sends = std::max(most_sends, check.sends.size());
    most_receives = std::max(most_receives, check.receives.size());
  }
  // Every slot can hold the largest step: refilling one never allocates.
  for (auto& slot : slots_) {
    slot.sends.reserve(most_sends);
    slot.receives.reserve(most_receives);
  }
  const std::size_t scratch_size = std::max(most_sends, most_receives);
  scratch_.sends.reserve(scratch_size);
  scratch_.receives.reserve(scratch_size);
}

std::uint32_t CollectiveSchedule::connection_of(int peer) const {
  const auto it = std::lower_bound(peer_connections_.begin(), peer_connections_.end(), peer,
                                   [](const auto& p, int value) { return p.first < value; });
  return it != peer_connections_.end() && it->first == peer ? it->second : no_connection;
}

void CollectiveSchedule::fill(StepSchedule& out) const {
  out.after = scratch_.after;
  out.sends.clear();
  out.receives.clear();
  out.arrivals_needed = 0;
  for (const auto& t : scratch_.sends) out.sends.push_back({connection_of(t.peer), t});
  for (const auto& t : scratch_.receives) {
    out.receives.push_back({connection_of(t.peer), t});
    out.arrivals_needed += share_count(scaling_, t.bytes);
  }
  std::sort(out.receives.begin(), out.receives.end(), by_connection);
}

const StepSchedule& CollectiveSchedule::at(std::uint32_t step) {
  const std::size_t slot = step % slot_count;
  if (slot_step_[slot] != step) {
    plan_.step(rank_, static_cast<int>(step), scratch_);
    fill(slots_[slot]);
    slot_step_[slot] = step;
  }
  return slots_[slot];
}

}  // namespace rocehil::traffic
