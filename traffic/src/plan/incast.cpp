// Incast N:1: every rank but 0 sends its message to rank 0 at once, all landing in one receive
// area (the point is the congestion at rank 0's port, not what the bytes are). Rank 0's single
// step lists N-1 receives: O(N) for that rank, and O(1) for every other.
#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

class Incast final : public CollectivePlan {
 public:
  explicit Incast(const PlanOptions& o) : CollectivePlan(o) {}

  std::uint64_t region_bytes() const override { return 2 * bytes(); }
  int steps(int) const override { return 1; }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    const Transfer t{.src_offset = 0, .dst_offset = bytes(), .bytes = bytes()};
    if (rank == 0) {
      for (int r = 1; r < ranks(); ++r) {
        Transfer in = t;
        in.peer = r;
        add(out.receives, in);
      }
    } else {
      Transfer to_root = t;
      to_root.peer = 0;
      add(out.sends, to_root);
    }
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    if (rank != 0) {
      out.push_back(0);
      return;
    }
    for (int r = 1; r < ranks(); ++r) out.push_back(r);
  }

  std::vector<Range> outputs(int rank) const override {
    if (rank != 0) return {};
    return {{bytes(), bytes()}};
  }

  std::vector<Range> inputs(int rank) const override {
    if (rank == 0) return {};
    return {{0, bytes()}};
  }
};

}  // namespace

std::unique_ptr<CollectivePlan> make_incast(const PlanOptions& options) {
  return std::make_unique<Incast>(options);
}

}  // namespace rocehil::traffic::plan
