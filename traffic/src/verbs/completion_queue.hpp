#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "rocehil/traffic/provider.hpp"
#include "verbs/device.hpp"
#include "verbs/handles.hpp"

namespace rocehil::traffic::verbs {

class VerbsQueuePair;

// The ibv_cq and the QPs reporting to it. Shared by the CompletionQueue object and each of its
// QPs, so the CQ is destroyed after its last QP (ibv_destroy_cq fails with EBUSY before that).
struct CqCore {
  std::shared_ptr<DeviceContext> device;
  CompletionQueueHandle cq;
  // Receive and send depths of the live QPs. Kept within the CQ's real size (ibv_cq::cqe): a
  // CQ that overflows moves to an error state and every QP on it stops, which a run would report
  // as a fabric failure.
  std::uint64_t committed = 0;
  // Indexed by work_id::qp_index; an entry is null once its QP is destroyed (a completion still
  // queued for it is dropped). Indexes are not reused, so a late completion never reaches a
  // newer QP.
  std::vector<VerbsQueuePair*> queue_pairs;
};

class VerbsCompletionQueue final : public CompletionQueue {
 public:
  // Throws rocehil::Error when the depth is out of the device's range or ibv_create_cq fails.
  VerbsCompletionQueue(std::shared_ptr<DeviceContext> device, std::uint32_t depth);

  // Polls in batches into a fixed array and translates; allocates nothing, never throws.
  std::size_t poll(std::span<Completion> out) override;

  const std::shared_ptr<CqCore>& core() const noexcept { return core_; }
  const std::string& failure() const noexcept override { return failure_; }

 private:
  static constexpr std::size_t batch_size = 32;
  std::shared_ptr<CqCore> core_;
  std::array<ibv_wc, batch_size> batch_{};
  std::uint32_t depth_ = 0;
  std::string failure_;  // set once, on the error path only
};

}  // namespace rocehil::traffic::verbs
