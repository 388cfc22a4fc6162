// Pairwise: every pair of ranks exchanges its message both ways once, in the rounds of a
// round-robin tournament (the circle method), so no rank is in two pairs at once: N-1 rounds for
// even N; for odd N, N rounds with one rank sitting each out. The partner of rank i in round t is
// found in O(1): with M = N rounded up to even, position M-1 stays put and meets t; the others
// meet (2t - i) mod (M-1).
//
// A round is two steps: a one-byte token each way, then the message each way. The token says
// "I am done with my last round", so a rank never receives from its next partner while still
// exchanging with the last one: the pair's time is its own, and the data that lands is theirs.
#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

class Pairwise final : public CollectivePlan {
 public:
  explicit Pairwise(const PlanOptions& o) : CollectivePlan(o), slots_(o.ranks + o.ranks % 2) {}

  // The message, the receive area, the token.
  std::uint64_t region_bytes() const override { return 2 * bytes() + 1; }
  int steps(int) const override { return 2 * (slots_ - 1); }

  // The rank `rank` meets in round `round`, or -1 when it sits out.
  int partner(int rank, int round) const {
    const int last = slots_ - 1;
    int p = rank == last ? round : mod(2LL * round - rank, last);
    if (p == rank) p = last;
    return p < ranks() ? p : -1;
  }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    out.after = index == 0 ? After::start : After::earlier_receives;
    const int p = partner(rank, index / 2);
    if (p < 0) return;
    const bool token = index % 2 == 0;
    const Transfer t{.peer = p,
                     .src_offset = 0,
                     .dst_offset = token ? 2 * bytes() : bytes(),
                     .bytes = token ? 1 : bytes()};
    add(out.sends, t);
    add(out.receives, t);
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    for (int r = 0; r < ranks(); ++r)
      if (r != rank) out.push_back(r);
  }

  std::vector<Range> inputs(int) const override { return {{0, bytes()}}; }
  std::vector<Range> outputs(int) const override { return {{bytes(), bytes()}}; }

 private:
  int slots_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_pairwise(const PlanOptions& options) {
  return std::make_unique<Pairwise>(options);
}

}  // namespace rocehil::traffic::plan
