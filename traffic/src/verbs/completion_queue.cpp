#include "verbs/completion_queue.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "rocehil/common/error.hpp"
#include "verbs/queue_pair.hpp"
#include "verbs/work_id.hpp"

namespace rocehil::traffic::verbs {

VerbsCompletionQueue::VerbsCompletionQueue(std::shared_ptr<DeviceContext> device,
                                           std::uint32_t depth)
    : core_(std::make_shared<CqCore>()) {
  const auto max_cqe = static_cast<std::uint32_t>(device->device_attr.max_cqe);
  if (depth == 0 || depth > max_cqe) {
    throw input_error(fmt::format("completion queue depth {} on {} is outside 1..{}", depth,
                                  device->name, max_cqe));
  }
  core_->cq = create_cq(device->context.get(), static_cast<int>(depth), device->name);
  depth_ = depth;
  core_->device = std::move(device);
}

std::size_t VerbsCompletionQueue::poll(std::span<Completion> out) {
  if (!failure_.empty()) return 0;
  std::size_t filled = 0;
  while (filled < out.size()) {
    // Never take more work completions than `out` has room for: each yields at most one.
    const std::size_t want = std::min(out.size() - filled, batch_.size());
    const int got = ibv_poll_cq(core_->cq.get(), static_cast<int>(want), batch_.data());
    if (got < 0 && failure_.empty())  // only a new CQ would clear it: say so once, poll no more
      failure_ = fmt::format("{}: completion queue of {} entries failed: ibv_poll_cq returned {}",
                             core_->device->name, depth_, got);
    if (got <= 0) break;
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = batch_[static_cast<std::size_t>(i)];
      const std::uint32_t index = work_id::qp_index(wc.wr_id);
      VerbsQueuePair* qp = index < core_->queue_pairs.size() ? core_->queue_pairs[index] : nullptr;
      if (qp != nullptr && qp->complete(wc, out[filled])) ++filled;
    }
    if (static_cast<std::size_t>(got) < want) break;
  }
  return filled;
}

}  // namespace rocehil::traffic::verbs
