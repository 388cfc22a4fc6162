#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "rocehil/traffic/collective.hpp"
#include "rocehil/traffic/collective_executor.hpp"
#include "rocehil/traffic/qp_scaling.hpp"

namespace rocehil::traffic {

// A transfer of the plan with the connection that carries it.
struct ScheduledTransfer {
  std::uint32_t connection = 0;
  Transfer transfer;
};

struct StepSchedule {
  After after = After::start;
  std::vector<ScheduledTransfer> sends;
  std::vector<ScheduledTransfer> receives;  // sorted by connection: found by binary search
  std::uint64_t arrivals_needed = 0;        // shares per iteration
};

// One rank's steps, resolved to its connections when asked for rather than held. A ring over N
// ranks has 2(N-1) steps; holding them all costs each rank about 240 bytes a step, which is
// 2 MiB a rank at 4,096 ranks and 8 GiB for a rehearsal that puts them all on one machine. The
// executor only ever looks at a few neighbouring steps at a time (the one it posts, the ones
// data arrives for, the one it completes), so a handful of slots keyed by step number keep
// what it uses, and refilling a slot reuses its capacity: no allocation once running.
class CollectiveSchedule {
 public:
  // Walks every step once to check it. Throws rocehil::Error (bad input): a peer of the plan
  // without a connection, a transfer over 1 GiB a share, a step that receives twice from one
  // rank.
  CollectiveSchedule(const CollectivePlan& plan, int rank, const QpScaling& scaling,
                     const std::vector<PeerConnection>& connections);

  std::uint32_t steps() const { return steps_; }
  // Bytes this rank sends and receives in one iteration.
  std::uint64_t send_bytes() const { return send_bytes_; }
  std::uint64_t receive_bytes() const { return receive_bytes_; }

  // Step `step` (< steps()). The reference holds until the next call.
  const StepSchedule& at(std::uint32_t step);

 private:
  static constexpr std::size_t slot_count = 8;
  static constexpr std::uint32_t empty_slot = ~std::uint32_t{0};     // a slot holding no step
  static constexpr std::uint32_t no_connection = ~std::uint32_t{0};  // a peer without one

  std::uint32_t connection_of(int peer) const;  // no_connection when none
  void fill(StepSchedule& out) const;           // from the step in scratch_

  const CollectivePlan& plan_;
  int rank_;
  QpScaling scaling_;
  std::vector<std::pair<int, std::uint32_t>> peer_connections_;  // sorted by peer
  std::uint32_t steps_ = 0;
  std::uint64_t send_bytes_ = 0, receive_bytes_ = 0;
  Step scratch_;
  std::array<std::uint32_t, slot_count> slot_step_{};
  std::array<StepSchedule, slot_count> slots_;
};

}  // namespace rocehil::traffic
