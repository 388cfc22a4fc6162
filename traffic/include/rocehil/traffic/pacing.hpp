#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rocehil::traffic {

// How a sender's `rate:` (docs/suites.md, "Pacing") was held.
enum class PacingMethod : std::uint8_t {
  nic,       // the NIC's own limiter, per QP (verbs: ibv_modify_qp_rate_limit)
  engine,    // rocehil's token bucket, which delays posting (run_bw_requester)
  perftest,  // perftest's software limiter (--rate_limit_type=SW)
};
std::string_view to_string(PacingMethod method);  // "nic", "engine", "perftest"
std::optional<PacingMethod> pacing_method_named(std::string_view name);

// Engine pacing: a token bucket of bits, on a clock the caller passes in (ns, any origin), so
// tests drive it without sleeping. It fills at `bits_per_s` up to `burst_bits`; a message takes
// its bits when the bucket holds them, or when it is full (a message larger than the burst
// still leaves, and the bucket goes into debt for it): over any long window the bits taken are
// the rate times the window plus at most one burst. Shared by all of a sender's QPs, so the
// rate is the sender's in all. Allocation-free and noexcept: it sits in the posting loop.
class TokenBucket {
 public:
  TokenBucket() = default;  // unpaced: every take succeeds
  TokenBucket(double bits_per_s, double burst_bits)
      : bits_per_ns_(bits_per_s / 1e9), burst_bits_(std::max(burst_bits, 1.0)) {}

  bool paced() const noexcept { return bits_per_ns_ > 0; }

  double burst_bits() const noexcept { return burst_bits_; }
  // Holds up to `bits` from now on, when that is more than it does: for a sender whose host
  // wakes it later than the burst lasts (pacing_burst_bits' adapt_to_gap).
  void widen_burst(double bits) noexcept { burst_bits_ = std::max(burst_bits_, bits); }

  // The rate's bits that found the bucket full and were lost, since the first use: what a sender
  // that was away (asleep past its wake-up, or its queues full) could not send later.
  double overflowed_bits() const noexcept { return overflowed_bits_; }

  // Takes `bits` at `now_ns` if the bucket allows them; returns whether it did.
  bool try_take(double bits, std::uint64_t now_ns) noexcept {
    if (!paced()) return true;
    refill(now_ns);
    if (tokens_ < bits && tokens_ < burst_bits_) return false;
    tokens_ -= bits;
    return true;
  }

  // Returns `bits` taken for a message that then could not be posted (a full queue).
  void put_back(double bits) noexcept {
    if (paced()) tokens_ = std::min(burst_bits_, tokens_ + bits);
  }

  // How long from `now_ns` until `bits` may be taken (0: now); for a poll loop that would
  // rather wait than spin.
  std::uint64_t wait_ns(double bits, std::uint64_t now_ns) noexcept {
    if (!paced()) return 0;
    refill(now_ns);
    const double need = std::min(bits, burst_bits_) - tokens_;
    return need <= 0 ? 0 : static_cast<std::uint64_t>(need / bits_per_ns_) + 1;
  }

 private:
  void refill(std::uint64_t now_ns) noexcept {
    if (!started_) {  // full at the first use: a sender starts with one burst, not a window
      started_ = true;
      last_ns_ = now_ns;
      tokens_ = burst_bits_;
      return;
    }
    if (now_ns <= last_ns_) return;  // a clock that did not move (or stepped back) adds nothing
    const double filled = tokens_ + static_cast<double>(now_ns - last_ns_) * bits_per_ns_;
    overflowed_bits_ += std::max(0.0, filled - std::max(tokens_, burst_bits_));
    tokens_ = std::min(burst_bits_, filled);
    last_ns_ = now_ns;
  }

  double bits_per_ns_ = 0;
  double burst_bits_ = 0;
  double tokens_ = 0;
  double overflowed_bits_ = 0;
  std::uint64_t last_ns_ = 0;
  bool started_ = false;
};

// The burst a sender of `message_bytes` messages at `bits_per_s` is given: two messages, or
// 5 ms at the rate, whichever is more. A window of a second is off by at most 0.5% (plus two
// messages); a sender descheduled for a few milliseconds (a busy host, the testbed's two
// cores: with 200 us a soft sender asked for 0.5 Gbit/s reached 0.385) catches up instead of
// losing the time.
inline double pacing_burst_bits(double bits_per_s, std::uint32_t message_bytes) {
  return std::max(16.0 * message_bytes, bits_per_s * 5e-3);
}

// A host that wakes its sender later than the burst lasts (an emulated guest sleeping 200 us
// wakes ~8 ms later) loses the rate of every overshoot to a full bucket: the `--vm` guests reached
// 51% of their rate so. Seen a gap of `gap_ns` between two turns of the posting loop, the burst
// widens to twice the gap's worth of rate, at most 50 ms of it, so the sender catches up after
// each late wake-up; bursts stay bounded, the average rate becomes the one asked.
inline double burst_for_gap(double bits_per_s, std::uint64_t gap_ns) {
  return std::min(2.0 * static_cast<double>(gap_ns) * 1e-9, 50e-3) * bits_per_s;
}

}  // namespace rocehil::traffic
