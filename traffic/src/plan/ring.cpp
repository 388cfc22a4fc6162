// Ring allreduce, allgather and reduce-scatter over RingPlan's steps, in place: the message is
// the region's first `bytes`, and reductions land in a scratch copy behind it first.
#include "plan/plan_kinds.hpp"
#include "rocehil/traffic/ring_plan.hpp"

namespace rocehil::traffic::plan {

namespace {

RingCollective collective_of(Pattern p) {
  if (p == Pattern::ring_allgather) return RingCollective::allgather;
  if (p == Pattern::ring_reduce_scatter) return RingCollective::reduce_scatter;
  return RingCollective::allreduce;
}

class Ring final : public CollectivePlan {
 public:
  explicit Ring(const PlanOptions& o)
      : CollectivePlan(o), ring_(collective_of(o.pattern), o.ranks, o.bytes) {}

  std::uint64_t region_bytes() const override {
    return pattern() == Pattern::ring_allgather ? bytes() : 2 * bytes();
  }
  int steps(int) const override { return ring_.steps(); }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    const RingStep s = ring_.step(rank, index);
    out.after = index == 0 ? After::start : After::earlier_receives;
    add(out.sends, chunk_transfer(s.send_to, s.send.offset, s.send.bytes, s.reduce, bytes()));
    add(out.receives,
        chunk_transfer(s.receive_from, s.receive.offset, s.receive.bytes, s.reduce, bytes()));
  }

  void peers(int rank, std::vector<int>& out) const override {
    out = {mod(rank - 1, ranks()), mod(rank + 1, ranks())};
    normalize_peers(out);
  }

  std::vector<Range> outputs(int rank) const override {
    if (pattern() != Pattern::ring_reduce_scatter) return {{0, bytes()}};
    const Chunk c = ring_.chunk(rank);
    return {{c.offset, c.bytes}};
  }

  std::vector<Range> inputs(int rank) const override {
    if (pattern() != Pattern::ring_allgather) return {{0, bytes()}};
    const Chunk c = ring_.chunk(rank);
    return {{c.offset, c.bytes}};
  }

 private:
  RingPlan ring_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_ring(const PlanOptions& options) {
  return std::make_unique<Ring>(options);
}

}  // namespace rocehil::traffic::plan
