#pragma once

#include <cstdint>
#include <optional>

namespace rocehil::traffic {

// The longest time one QP had work outstanding and completed none of it: a flow the fabric
// stopped (a dead link its packets or ACKs were hashed onto) while the sender's other QPs kept
// its rate, which the sender's total bytes over time hide. Counted from the QP's first
// completion (connection setup and the first round trip are not a stall); a time the QP had
// nothing outstanding (paced, or done) is none. Pure, and two stores per completion: the bw
// requester keeps one per QP.
struct QpStall {
  std::uint64_t ns = 0;
  std::uint64_t from_ns = 0;  // when it began, on the caller's clock
};

class StallWatch {
 public:
  // Work posted at `now_ns`; `was_idle`: the QP had none outstanding before, so its wait for a
  // completion starts now.
  void posted(std::uint64_t now_ns, bool was_idle) {
    if (was_idle && progress_at_ns_) progress_at_ns_ = now_ns;
  }
  void completed(std::uint64_t now_ns) {
    if (progress_at_ns_) note(now_ns);
    progress_at_ns_ = now_ns;
  }
  // The run ended at `now_ns`: work still outstanding has waited since the last progress.
  void ended(std::uint64_t now_ns, bool outstanding) {
    if (outstanding && progress_at_ns_) note(now_ns);
  }
  // Nothing before the QP's first completion.
  std::optional<QpStall> longest() const {
    return progress_at_ns_ ? std::optional<QpStall>(longest_) : std::nullopt;
  }

 private:
  void note(std::uint64_t now_ns) {
    if (now_ns > *progress_at_ns_ && now_ns - *progress_at_ns_ > longest_.ns)
      longest_ = {now_ns - *progress_at_ns_, *progress_at_ns_};
  }
  std::optional<std::uint64_t> progress_at_ns_;
  QpStall longest_;
};

}  // namespace rocehil::traffic
