#pragma once

#include <cstdint>
#include <string_view>

namespace rocehil::traffic::soft {

// DCQCN reaction-point parameters, named after ConnectX's (mlxconfig / mlx5 sysfs) parameters so
// that a value read from `mlxconfig -d <dev> q` or /sys/class/net/<if>/ecn/roce_rp/ can be copied
// here unchanged. Units are the NIC's: microseconds, bytes, Mb/s, and 1/1024 fixed-point fractions.
//
// Sources read (what each one said is quoted per field, in our own words):
//  [paper]    Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, via
//             the htsim DCQCN model that reproduces its constants (CNP interval N = 50 us, alpha
//             period K = 55 us, rate timer 55 us, g = 1/256, byte counter B = 10 MB, F = 5).
//  [mlxcfg]   Mellanox/mstflint, mlxconfig/mlxcfg_param_lib.cpp (parameter help text) and
//             tools_layouts/tools_open_layouts.h (struct tools_open_roce_cc_ecn field notes). Both
//             still carry the first firmware's defaults (e.g. DCE_TCP_G 64, RPG_THRESHOLD 5).
//  [query]    `mlxconfig q` output of ConnectX-4 .. ConnectX-6 cards published on the web, and
//             /sys/class/net/<if>/ecn/roce_rp dumps: the defaults current firmware really ships.
//  [linux]    drivers/infiniband/hw/mlx5/cong.c (debugfs cc_params: rp_* and np_* names) and the
//             2020 patch "IB/mlx5: Add np_min_time_between_cnps and rp_max_rate debug params".
//  [dcbnl]    include/uapi/linux/dcbnl.h, struct ieee_qcn: the 802.1Qau (QCN) rpg_* fields that
//             ConnectX's names come from.
//  [isekai]   Google's isekai simulator, isekai/host/rdma/rdma_roce_cc_dcqcn.{h,cc}: a model of
//             ConnectX DCQCN with the same defaults.
struct DcqcnParameters {
  // RPG_TIME_RESET: time between two rate-increase timer events while no rate cut happens, in
  // microseconds ([mlxcfg], [dcbnl]: "given in u-seconds"). The paper's timer is 55 us; ConnectX
  // ships 300 ([query], [isekai]). 0 disables the timer.
  std::uint32_t rpg_time_reset_us = 300;

  // RPG_BYTE_RESET: bytes transmitted between two byte-counter increase events ([mlxcfg], [dcbnl]:
  // "given in Bytes"; 0 disables). The field is 15 bits wide ([mlxcfg] layout bits 8.0-8.14), so
  // the shipped 32767 ([query]) is its maximum. Sources disagree on the unit: [isekai] multiplies
  // it by 64 (about 2 MB per event, nearer the paper's 10 MB). We follow the vendor's own text,
  // bytes, because it is the only primary source; a caller who believes the 64-byte reading can
  // pass the product.
  std::uint32_t rpg_byte_reset_bytes = 32767;

  // RPG_AI_RATE: step, in Mb/s, added to the target rate on each additive-increase event
  // ([mlxcfg]: "used to increase rpTargetRate in the RPR_ACTIVE_INCREASE state"). Default 5
  // ([query]); the paper used 40 Mb/s.
  std::uint32_t rpg_ai_rate_mbps = 5;

  // RPG_HAI_RATE: step, in Mb/s, for hyper increase ([mlxcfg]: "RPR_HYPER_INCREASE state").
  // Default 50 ([query]). Following the paper, the i-th hyper-increase event adds i times this.
  std::uint32_t rpg_hai_rate_mbps = 50;

  // RPG_GD: log2 of the divisor Gd in a cut to (1 - alpha/Gd) * current, where alpha is the 10-bit
  // fixed-point value ([mlxcfg]: "given as log2(Gd), where Gd may only be powers of 2"). With
  // alpha scaled by 1024, Gd = 2^11 gives the paper's (1 - alpha/2): the shipped 11 ([query],
  // [isekai] alpha_to_rate_shift = 11) is exactly the paper's rule.
  std::uint32_t rpg_gd = 11;

  // RPG_MIN_DEC_FAC: a single cut never leaves less than this percentage of the current rate
  // ([mlxcfg]: "minimum factor by which the current transmit rate can be changed when processing
  // a CNP", 1..100; [isekai] caps the reduction at (100 - fac)%). Default 50 ([query]).
  std::uint32_t rpg_min_dec_fac_percent = 50;

  // RPG_MIN_RATE: floor, in Mb/s, of the limited rate ([mlxcfg]: "minimum value, in Mb per
  // second, for rate to limit"). Shipped 1 ([query]); the old help text said 2000.
  std::uint32_t rpg_min_rate_mbps = 1;

  // DCE_TCP_G: gain of the alpha (congestion estimate) update, a fraction of 1024, applied once
  // per DCE_TCP_RTT ([mlxcfg]: alpha = cnp_received * g + (1 - g) * alpha, g divided by 2^10).
  // Shipped 1019 ([query]). Sources disagree on which side of the equation the number sits:
  // [isekai] reads it as the weight of the old alpha, alpha = (G/1024) * alpha + (1 - G/1024) on
  // a CNP period, which makes 1019 an effective gain of 5/1024, close to the paper's 1/256; read
  // as the vendor text says, 1019 makes alpha forget a CNP within one period. We follow the vendor
  // text (gain = G/1024) because it is NVIDIA's own statement and the project brief's; the other
  // reading is the same model with dce_tcp_g = 1024 - G, so a run on real hardware can tell which
  // one the firmware uses.
  std::uint32_t dce_tcp_g = 1019;

  // DCE_TCP_RTT: the alpha update period in microseconds ([mlxcfg]: "time between updates of the
  // alpha value"): alpha decays once for every period that passes without a CNP. The paper's K is
  // 55 us. ConnectX-4..6 firmware reports 1 ([query], [isekai]); we keep 55 (the paper, and the
  // project brief) because with the vendor's reading of DCE_TCP_G a 1 us period makes alpha ~0 a
  // microsecond after each CNP, so every cut after the first would be negligible in this model
  // (which cuts with the alpha in force when the CNP arrives). Set 1 to copy the firmware. 0 turns
  // the decay off.
  std::uint32_t dce_tcp_rtt_us = 55;

  // INITIAL_ALPHA_VALUE: alpha given to a flow when its rate limiter is allocated, on its first
  // CNP, as a fraction of 1024 ([mlxcfg]: "initial value of alpha to use when receiving the first
  // CNP for a flow. Expressed in a fixed point fraction of 2^10"). 1023 ([query]) is the 10-bit
  // field's maximum: the first cut is (almost) the paper's halving, where alpha starts at 1.
  std::uint32_t initial_alpha_value = 1023;

  // RPG_THRESHOLD: the paper's F: how many events each counter (timer, byte) counts in fast
  // recovery before the state machine advances ([mlxcfg], [dcbnl]: "number of times rpByteStage
  // or rpTimeStage can count before the RP rate control state machine advances states"; 0..31).
  // The paper used 5; ConnectX ships 1 ([query]).
  std::uint32_t rpg_threshold = 1;

  // RATE_REDUCE_MONITOR_PERIOD: minimum time between two rate cuts of one flow, in microseconds;
  // a CNP that arrives sooner is not lost, it is applied when the period ends ([mlxcfg]: "the
  // minimum time between 2 consecutive rate reductions for a single flow. Rate reduction will
  // occur only if a CNP is received during the relevant time interval"). Default 4 ([query]).
  // 0 lets every CNP cut.
  std::uint32_t rate_reduce_monitor_period_us = 4;

  // CLAMP_TGT_RATE and CLAMP_TGT_RATE_AFTER_TIME_INC decide whether a cut first sets the target
  // rate to the current rate. The paper always does. ConnectX ([mlxcfg]: "the target rate should
  // be updated if the transmission rate was increased due to the timer, and not only due to the
  // byte counter"; shipped False and True, [query]) does it only if the rate rose since the last
  // cut: with the defaults, back-to-back cuts keep the older, higher target, so recovery aims back
  // where the flow was before the burst of CNPs. We follow [isekai]'s reading: clamp when
  // clamp_tgt_rate, or a byte-counter event happened, or (after_time_inc and) a timer event did.
  bool clamp_tgt_rate = false;
  bool clamp_tgt_rate_after_time_inc = true;

  // The rate the limiter is released at, in Mb/s: the port speed, as ConnectX's RPG_MAX_RATE = 0
  // ("full port speed") means. Once the current rate is back here the flow is no longer limited
  // ([mlxcfg] RPG_MAX_RATE: "Once this limit is reached, the RP rate limiter is released").
  double line_rate_mbps = 100'000.0;

  // Empty when the parameters can drive a reaction point; otherwise what is wrong, for a setup
  // error message. The checks follow the ranges [mlxcfg] gives.
  [[nodiscard]] std::string_view invalid_reason() const noexcept;
};

// The DCQCN reaction point (sender side) of one QP, on a virtual clock: every call passes the
// current time in nanoseconds and nothing reads a clock. Pure and allocation-free; the provider
// calls on_cnp() when a CNP for the QP arrives, on_bytes_sent() after each transmitted packet,
// advance() from its poll loop, and paces packets with transmit_gap_ns().
//
// State machine (R_C current rate, R_T target rate, T and B the timer and byte-counter event
// counts since the last cut, F = RPG_THRESHOLD):
//
//   UNLIMITED (R_C = line rate; no timers run; bytes are not counted)
//     -- CNP --> a rate limiter is allocated: alpha = INITIAL_ALPHA_VALUE/1024, R_T = R_C = line
//                rate, then CUT.
//   CUT (at most once per RATE_REDUCE_MONITOR_PERIOD; a CNP inside the period is kept pending and
//        cut at the period's end):
//        R_T = R_C (unless the ConnectX clamp rules say keep R_T, see clamp_tgt_rate);
//        R_C = R_C * (1 - min(alpha * 1024 / 2^RPG_GD, 1 - RPG_MIN_DEC_FAC/100)),
//              floored at RPG_MIN_RATE;
//        alpha = (1 - g) * alpha + g;   T = B = 0; byte count = 0; rate timer restarts.
//   Increase event: every RPG_TIME_RESET without a cut (T += 1), and every RPG_BYTE_RESET bytes
//   sent (B += 1). After counting the event:
//        max(T, B) <= F        fast recovery:    R_C = (R_C + R_T) / 2
//        min(T, B) >  F        hyper increase:   R_T += i * RPG_HAI_RATE, i = min(T, B) - F;
//                                                R_C = (R_C + R_T) / 2
//        otherwise             additive increase: R_T += RPG_AI_RATE; R_C = (R_C + R_T) / 2
//        R_T is capped at the line rate. When R_C comes within 1 Mb/s (ConnectX's rate
//        granularity) of the line rate, the limiter is released: back to UNLIMITED.
//   Alpha: each DCE_TCP_RTT that passes with no CNP arriving, alpha = (1 - g) * alpha.
//   g = DCE_TCP_G / 1024 (see the parameter's comment for the other reading).
//
// Events are applied in time order, each at the instant it is due, however late the call that
// discovers them. Times earlier than one already seen are treated as that time.
class DcqcnReactionPoint {
 public:
  explicit DcqcnReactionPoint(const DcqcnParameters& parameters) noexcept;

  // A CNP for this QP arrived at now_ns.
  void on_cnp(std::uint64_t now_ns) noexcept;
  // The QP put `bytes` on the wire at now_ns (the same bytes the QP's counters count).
  void on_bytes_sent(std::uint64_t bytes, std::uint64_t now_ns) noexcept;
  // Runs the timers (rate increase, alpha decay, pending cut) up to now_ns.
  void advance(std::uint64_t now_ns) noexcept;

  double current_rate_mbps() const noexcept { return current_rate_mbps_; }
  double target_rate_mbps() const noexcept { return target_rate_mbps_; }
  // The congestion estimate in [0, 1]. While unlimited: the value the next limiter starts with.
  double alpha() const noexcept { return alpha_; }
  // True from the first CNP until the rate is back at the line rate.
  bool limited() const noexcept { return limited_; }
  std::uint64_t cnps_handled() const noexcept { return cnps_handled_; }
  std::uint64_t rate_cuts() const noexcept { return rate_cuts_; }

  // Nanoseconds one packet of packet_bytes occupies at the current rate, rounded to the nearest
  // nanosecond: the spacing a pacer keeps between packet starts. At the line rate while unlimited.
  std::uint64_t transmit_gap_ns(std::uint32_t packet_bytes) const noexcept;

  const DcqcnParameters& parameters() const noexcept { return parameters_; }

 private:
  std::uint64_t catch_up(std::uint64_t now_ns) noexcept;
  void allocate_limiter(std::uint64_t now_ns) noexcept;
  void cut(std::uint64_t at_ns) noexcept;
  void increase() noexcept;
  void release_limiter() noexcept;
  void decay_alpha_until(std::uint64_t at_ns) noexcept;

  DcqcnParameters parameters_;
  // Derived once: nanosecond periods, fractions and the effective rate bounds.
  std::uint64_t time_reset_ns_;
  std::uint64_t alpha_period_ns_;
  std::uint64_t monitor_period_ns_;
  double gain_;
  double initial_alpha_;
  double cut_scale_;      // 1024 / 2^RPG_GD: multiplies alpha into the cut fraction
  double max_cut_;        // 1 - RPG_MIN_DEC_FAC / 100
  double min_rate_mbps_;  // RPG_MIN_RATE, never above the line rate

  double current_rate_mbps_;
  double target_rate_mbps_;
  double alpha_;
  bool limited_ = false;
  bool cut_pending_ = false;
  std::uint64_t latest_ns_ = 0;  // the latest time seen: the clock never runs backwards here
  std::uint64_t last_cut_ns_ = 0;
  std::uint64_t next_timer_event_ns_ = 0;
  std::uint64_t alpha_quiet_since_ns_ = 0;  // start of the current CNP-free alpha period
  std::uint64_t bytes_since_byte_event_ = 0;
  std::uint32_t timer_events_ = 0;  // T
  std::uint32_t byte_events_ = 0;   // B
  std::uint64_t cnps_handled_ = 0;
  std::uint64_t rate_cuts_ = 0;
};

}  // namespace rocehil::traffic::soft
