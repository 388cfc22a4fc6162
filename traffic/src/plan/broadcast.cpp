// Broadcast as a pipelined chain 0 -> 1 -> ... -> N-1: the message goes in `pipeline` pieces, and
// every rank forwards a piece as soon as it has it, so all links of the chain carry data at once.
#include <algorithm>

#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

class Broadcast final : public CollectivePlan {
 public:
  explicit Broadcast(const PlanOptions& o)
      : CollectivePlan(o),
        pieces_(static_cast<int>(
            std::clamp<std::uint64_t>(o.bytes, 1, static_cast<std::uint64_t>(o.pipeline)))) {}

  std::uint64_t region_bytes() const override { return bytes(); }
  int steps(int) const override { return pieces_; }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    out.after = After::through_this_step;
    const Piece p = piece(bytes(), pieces_, index);
    const Transfer t{.src_offset = p.offset, .dst_offset = p.offset, .bytes = p.bytes};
    if (rank > 0) {
      Transfer r = t;
      r.peer = rank - 1;
      add(out.receives, r);
    }
    if (rank + 1 < ranks()) {
      Transfer s = t;
      s.peer = rank + 1;
      add(out.sends, s);
    }
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    if (rank > 0) out.push_back(rank - 1);
    if (rank + 1 < ranks()) out.push_back(rank + 1);
  }

  std::vector<Range> outputs(int) const override { return {{0, bytes()}}; }

  std::vector<Range> inputs(int rank) const override {
    if (rank == 0) return {{0, bytes()}};
    return {};
  }

 private:
  int pieces_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_broadcast(const PlanOptions& options) {
  return std::make_unique<Broadcast>(options);
}

}  // namespace rocehil::traffic::plan
