// Alltoall as a pairwise exchange: the message is cut in N equal blocks (the remainder is not
// sent, as nccl-tests rounds a size down to a multiple of the ranks); at step s (1..N-1) rank r
// sends block r+s of its send half to rank r+s and receives block r-s from rank r-s into its
// receive half. A step waits for the one before, so no rank is the target of two at once.
#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

class Alltoall final : public CollectivePlan {
 public:
  explicit Alltoall(const PlanOptions& o) : CollectivePlan(o), block_(o.bytes / o.ranks) {}

  std::uint64_t region_bytes() const override { return 2 * bytes(); }
  int steps(int) const override { return ranks() - 1; }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    out.after = index == 0 ? After::start : After::earlier_receives;
    const int to = mod(rank + index + 1, ranks());
    const int from = mod(rank - index - 1, ranks());
    add(out.sends, {.peer = to,
                    .src_offset = block_ * to,
                    .dst_offset = bytes() + block_ * rank,
                    .bytes = block_});
    add(out.receives, {.peer = from,
                       .src_offset = block_ * rank,
                       .dst_offset = bytes() + block_ * from,
                       .bytes = block_});
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    for (int r = 0; r < ranks(); ++r)
      if (r != rank) out.push_back(r);
  }

  std::vector<Range> inputs(int) const override { return {{0, block_ * ranks()}}; }
  // Every block but the rank's own, which never crosses the network.
  std::vector<Range> outputs(int rank) const override {
    std::vector<Range> out;
    if (rank > 0) out.push_back({bytes(), block_ * rank});
    if (rank + 1 < ranks())
      out.push_back({bytes() + block_ * (rank + 1), block_ * (ranks() - rank - 1)});
    return out;
  }

 private:
  std::uint64_t block_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_alltoall(const PlanOptions& options) {
  return std::make_unique<Alltoall>(options);
}

}  // namespace rocehil::traffic::plan
