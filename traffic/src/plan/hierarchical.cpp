// Hierarchical (rail-aligned) allreduce. Ranks are hosts x rails: rank = host x G + rail, with G
// ranks per host. Three phases, each a ring:
// 1. reduce-scatter among the G ranks of a host (their traffic stays inside the host), after
//    which local rank g holds slice g of the host's sum;
// 2. allreduce of slice g around the ring of rank g on every host: each rail carries only its
//    own slice, across hosts;
// 3. allgather among the ranks of a host.
// Region: the message, the host phase's scratch, and the rail phase's own scratch (a rail peer
// may send before this rank has folded in the last piece of phase 1).
#include <fmt/format.h>

#include "plan/plan_kinds.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/traffic/ring_plan.hpp"

namespace rocehil::traffic::plan {

namespace {

class Hierarchical final : public CollectivePlan {
 public:
  explicit Hierarchical(const PlanOptions& o)
      : CollectivePlan(o), per_host_(o.ranks_per_host), hosts_(o.ranks / o.ranks_per_host) {}

  std::uint64_t region_bytes() const override { return 3 * bytes(); }
  int steps(int) const override { return local_steps() + rail_steps() + local_steps(); }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    out.after = index == 0 ? After::start : After::earlier_receives;
    const int host = rank / per_host_;
    const int g = rank % per_host_;
    if (index < local_steps()) {
      const RingPlan ring(RingCollective::reduce_scatter, per_host_, bytes());
      emit(
          ring.step(g, index), 0, bytes(), [&](int r) { return host * per_host_ + r; }, out);
    } else if (index < local_steps() + rail_steps()) {
      // RingPlan cuts chunks as piece() does: slice g is what phase 1 left reduced on rank g.
      const Piece slice = piece(bytes(), per_host_, g);
      const RingPlan ring(RingCollective::allreduce, hosts_, slice.bytes);
      emit(
          ring.step(host, index - local_steps()), slice.offset, 2 * bytes(),
          [&](int h) { return h * per_host_ + g; }, out);
    } else {
      const RingPlan ring(RingCollective::allgather, per_host_, bytes());
      emit(
          ring.step(g, index - local_steps() - rail_steps()), 0, 0,
          [&](int r) { return host * per_host_ + r; }, out);
    }
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    const int host = rank / per_host_;
    const int g = rank % per_host_;
    if (per_host_ > 1) {
      out.push_back(host * per_host_ + mod(g - 1, per_host_));
      out.push_back(host * per_host_ + mod(g + 1, per_host_));
    }
    if (hosts_ > 1) {
      out.push_back(mod(host - 1, hosts_) * per_host_ + g);
      out.push_back(mod(host + 1, hosts_) * per_host_ + g);
    }
    normalize_peers(out);
  }

  std::vector<Range> inputs(int) const override { return {{0, bytes()}}; }
  std::vector<Range> outputs(int) const override { return {{0, bytes()}}; }

 private:
  int local_steps() const { return per_host_ - 1; }
  int rail_steps() const { return hosts_ > 1 ? 2 * (hosts_ - 1) : 0; }

  // One ring step whose chunks are relative to `base`, reductions landing `scratch` further on.
  template <typename RankOf>
  void emit(const RingStep& s, std::uint64_t base, std::uint64_t scratch, RankOf rank_of,
            Step& out) const {
    add(out.sends,
        chunk_transfer(rank_of(s.send_to), base + s.send.offset, s.send.bytes, s.reduce, scratch));
    add(out.receives, chunk_transfer(rank_of(s.receive_from), base + s.receive.offset,
                                     s.receive.bytes, s.reduce, scratch));
  }

  int per_host_;
  int hosts_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_hierarchical(const PlanOptions& options) {
  if (options.ranks_per_host < 1 || options.ranks % options.ranks_per_host != 0)
    throw input_error(fmt::format(
        "hierarchical_allreduce: {} ranks cannot be cut in hosts of {} ranks (give every host the "
        "same number of NICs, or choose another pattern)",
        options.ranks, options.ranks_per_host));
  return std::make_unique<Hierarchical>(options);
}

}  // namespace rocehil::traffic::plan
