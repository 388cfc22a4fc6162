#include "soft/dcqcn.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rocehil::traffic::soft {
namespace {

constexpr std::uint64_t ns_per_us = 1000;
constexpr double alpha_scale = 1024.0;  // alpha and DCE_TCP_G are 10-bit fixed-point fractions
constexpr std::uint64_t never = std::numeric_limits<std::uint64_t>::max();
// ConnectX programs every rate in whole Mb/s, so a rate closer than this to the line rate is the
// line rate. Without it, halving the gap to a target at the line rate would never quite arrive.
constexpr double rate_resolution_mbps = 1.0;

}  // namespace

std::string_view DcqcnParameters::invalid_reason() const noexcept {
  if (!(line_rate_mbps > 0.0) || !std::isfinite(line_rate_mbps)) {
    return "line_rate_mbps must be a positive number";
  }
  if (rpg_gd > 15) return "rpg_gd must be 0..15 (log2 of the divisor)";
  if (rpg_min_dec_fac_percent < 1 || rpg_min_dec_fac_percent > 100) {
    return "rpg_min_dec_fac_percent must be 1..100";
  }
  if (dce_tcp_g > 1024) return "dce_tcp_g must be 0..1024 (a fraction of 1024)";
  if (initial_alpha_value > 1024) return "initial_alpha_value must be 0..1024 (a fraction of 1024)";
  if (rpg_threshold > 31) return "rpg_threshold must be 0..31";
  return {};
}

DcqcnReactionPoint::DcqcnReactionPoint(const DcqcnParameters& parameters) noexcept
    : parameters_(parameters),
      time_reset_ns_(std::uint64_t{parameters.rpg_time_reset_us} * ns_per_us),
      alpha_period_ns_(std::uint64_t{parameters.dce_tcp_rtt_us} * ns_per_us),
      monitor_period_ns_(std::uint64_t{parameters.rate_reduce_monitor_period_us} * ns_per_us),
      // Out-of-range values are clamped rather than rejected: constructors here cannot fail, and
      // invalid_reason() is where a caller learns the configuration was wrong.
      gain_(std::min<double>(parameters.dce_tcp_g, alpha_scale) / alpha_scale),
      initial_alpha_(std::min<double>(parameters.initial_alpha_value, alpha_scale) / alpha_scale),
      cut_scale_(std::ldexp(alpha_scale, -static_cast<int>(std::min(parameters.rpg_gd, 30u)))),
      max_cut_(1.0 - std::min(parameters.rpg_min_dec_fac_percent, 100u) / 100.0),
      min_rate_mbps_(std::min<double>(parameters.rpg_min_rate_mbps, parameters.line_rate_mbps)),
      current_rate_mbps_(parameters.line_rate_mbps),
      target_rate_mbps_(parameters.line_rate_mbps),
      alpha_(initial_alpha_) {}

void DcqcnReactionPoint::on_cnp(std::uint64_t now_ns) noexcept {
  const std::uint64_t now = catch_up(now_ns);
  ++cnps_handled_;
  // A CNP in the current alpha period means that period did not pass quietly: restart it.
  alpha_quiet_since_ns_ = now;
  if (!limited_) {
    allocate_limiter(now);
    cut(now);
    return;
  }
  if (monitor_period_ns_ == 0 || now - last_cut_ns_ >= monitor_period_ns_) {
    cut(now);
  } else {
    // ConnectX does not drop it: the flow is cut once more when the monitor period ends.
    cut_pending_ = true;
  }
}

void DcqcnReactionPoint::on_bytes_sent(std::uint64_t bytes, std::uint64_t now_ns) noexcept {
  catch_up(now_ns);
  const std::uint64_t byte_reset = parameters_.rpg_byte_reset_bytes;
  if (!limited_ || byte_reset == 0) return;
  bytes_since_byte_event_ += bytes;
  while (limited_ && bytes_since_byte_event_ >= byte_reset) {
    bytes_since_byte_event_ -= byte_reset;
    ++byte_events_;
    increase();
  }
}

void DcqcnReactionPoint::advance(std::uint64_t now_ns) noexcept {
  catch_up(now_ns);
}

std::uint64_t DcqcnReactionPoint::catch_up(std::uint64_t now_ns) noexcept {
  const std::uint64_t now = std::max(now_ns, latest_ns_);
  latest_ns_ = now;
  // Take the due events one at a time, earliest first, so that a cut sees the alpha and rate of
  // its own instant even when the caller reports a long stretch of time at once. Once the limiter
  // is released nothing is scheduled, so the loop is bounded by the recovery to line rate.
  while (limited_) {
    const std::uint64_t cut_due = cut_pending_ ? last_cut_ns_ + monitor_period_ns_ : never;
    const std::uint64_t timer_due = time_reset_ns_ != 0 ? next_timer_event_ns_ : never;
    const std::uint64_t due = std::min(cut_due, timer_due);
    if (due > now) break;
    decay_alpha_until(due);
    if (due == cut_due) {
      cut(due);
    } else {
      next_timer_event_ns_ += time_reset_ns_;
      ++timer_events_;
      increase();
    }
  }
  if (limited_) decay_alpha_until(now);
  return now;
}

void DcqcnReactionPoint::allocate_limiter(std::uint64_t now_ns) noexcept {
  limited_ = true;
  alpha_ = initial_alpha_;
  current_rate_mbps_ = parameters_.line_rate_mbps;
  target_rate_mbps_ = parameters_.line_rate_mbps;
  alpha_quiet_since_ns_ = now_ns;
}

void DcqcnReactionPoint::cut(std::uint64_t at_ns) noexcept {
  const bool rate_rose_since_last_cut =
      byte_events_ > 0 || (parameters_.clamp_tgt_rate_after_time_inc && timer_events_ > 0);
  if (parameters_.clamp_tgt_rate || rate_rose_since_last_cut) {
    target_rate_mbps_ = current_rate_mbps_;
  }
  const double cut_fraction = std::min(alpha_ * cut_scale_, max_cut_);
  current_rate_mbps_ = std::max(current_rate_mbps_ * (1.0 - cut_fraction), min_rate_mbps_);
  alpha_ = (1.0 - gain_) * alpha_ + gain_;

  timer_events_ = 0;
  byte_events_ = 0;
  bytes_since_byte_event_ = 0;
  next_timer_event_ns_ = at_ns + time_reset_ns_;
  last_cut_ns_ = at_ns;
  cut_pending_ = false;
  ++rate_cuts_;
}

void DcqcnReactionPoint::increase() noexcept {
  const std::uint32_t threshold = parameters_.rpg_threshold;
  const std::uint32_t most = std::max(timer_events_, byte_events_);
  const std::uint32_t least = std::min(timer_events_, byte_events_);
  if (most <= threshold) {
    // Fast recovery: no new target, only close half the gap to where the flow was before the cut.
  } else if (least > threshold) {
    const double hyper_step = static_cast<double>(least - threshold);
    target_rate_mbps_ += hyper_step * parameters_.rpg_hai_rate_mbps;
  } else {
    target_rate_mbps_ += parameters_.rpg_ai_rate_mbps;
  }
  target_rate_mbps_ = std::min(target_rate_mbps_, parameters_.line_rate_mbps);
  current_rate_mbps_ = (current_rate_mbps_ + target_rate_mbps_) / 2.0;
  if (parameters_.line_rate_mbps - current_rate_mbps_ < rate_resolution_mbps) release_limiter();
}

void DcqcnReactionPoint::release_limiter() noexcept {
  limited_ = false;
  cut_pending_ = false;
  current_rate_mbps_ = parameters_.line_rate_mbps;
  target_rate_mbps_ = parameters_.line_rate_mbps;
  // The next CNP allocates a fresh limiter, which starts from INITIAL_ALPHA_VALUE again.
  alpha_ = initial_alpha_;
  timer_events_ = 0;
  byte_events_ = 0;
  bytes_since_byte_event_ = 0;
}

void DcqcnReactionPoint::decay_alpha_until(std::uint64_t at_ns) noexcept {
  if (alpha_period_ns_ == 0 || at_ns < alpha_quiet_since_ns_) return;
  const std::uint64_t quiet_periods = (at_ns - alpha_quiet_since_ns_) / alpha_period_ns_;
  if (quiet_periods == 0) return;
  // One multiplication per period would loop for as long as the flow stayed idle; pow() gives the
  // same (1 - g)^k in one step.
  alpha_ *= std::pow(1.0 - gain_, static_cast<double>(quiet_periods));
  alpha_quiet_since_ns_ += quiet_periods * alpha_period_ns_;
}

std::uint64_t DcqcnReactionPoint::transmit_gap_ns(std::uint32_t packet_bytes) const noexcept {
  if (!(current_rate_mbps_ > 0.0)) return never;
  // bits / (Mb/s) = microseconds; times 1000 for nanoseconds.
  const double gap_ns = static_cast<double>(packet_bytes) * 8.0 * 1000.0 / current_rate_mbps_;
  // Only a nonsensical configuration (a minimum rate near zero) gets here; llround would overflow.
  if (gap_ns >= 9.0e18) return never;
  return static_cast<std::uint64_t>(std::llround(gap_ns));
}

}  // namespace rocehil::traffic::soft
