// Tree allreduce over a double binary tree: the message is cut in two halves and each half is
// reduced up one binary tree and broadcast back down it, in `pipeline` pieces per half. The
// trees are in-order trees over positions (a node is the middle of its range); in the second,
// rank r sits at position r+1, so the odd positions that are inner nodes of the first tree are
// leaves of the second and the two halves' load falls on different ranks.
//
// Region: the message, then one scratch copy per child (a node's two children send it the same
// piece, to be XORed in).
#include <algorithm>
#include <array>

#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

struct Links {
  int parent = -1;
  int child_slot = 0;  // which of the parent's children this node is (0 or 1)
  std::array<int, 2> children{-1, -1};
};

// O(log N): walks down from the root of the in-order tree over positions [0, n).
Links links_at(int position, int n) {
  Links l;
  int lo = 0, hi = n;
  for (;;) {
    const int mid = lo + (hi - lo) / 2;
    if (position == mid) {
      if (lo < mid) l.children[0] = lo + (mid - lo) / 2;
      if (mid + 1 < hi) l.children[1] = (mid + 1) + (hi - mid - 1) / 2;
      return l;
    }
    l.parent = mid;
    if (position < mid) {
      l.child_slot = 0;
      hi = mid;
    } else {
      l.child_slot = 1;
      lo = mid + 1;
    }
  }
}

class Tree final : public CollectivePlan {
 public:
  explicit Tree(const PlanOptions& o) : CollectivePlan(o) {
    const std::uint64_t half0 = piece(o.bytes, 2, 0).bytes;
    pieces_ = static_cast<int>(
        std::clamp<std::uint64_t>(half0, 1, static_cast<std::uint64_t>(o.pipeline)));
  }

  std::uint64_t region_bytes() const override { return 3 * bytes(); }
  // Up: pieces x 2 trees, then down: the same.
  int steps(int) const override { return 4 * pieces_; }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    out.after = After::through_this_step;
    const bool up = index < 2 * pieces_;
    const int within = up ? index : index - 2 * pieces_;
    const int tree = within % 2;
    const int k = within / 2;
    const Piece half = piece(bytes(), 2, tree);
    const Piece p = piece(half.bytes, pieces_, k);
    const std::uint64_t at = half.offset + p.offset;
    const Links l = links_at(position(rank, tree), ranks());
    if (up) {
      for (int slot = 0; slot < 2; ++slot)
        if (l.children[slot] >= 0)
          add(out.receives, {.peer = rank_at(l.children[slot], tree),
                             .src_offset = at,
                             .dst_offset = scratch(slot) + at,
                             .bytes = p.bytes,
                             .reduce = true,
                             .reduce_offset = at});
      if (l.parent >= 0)
        add(out.sends, {.peer = rank_at(l.parent, tree),
                        .src_offset = at,
                        .dst_offset = scratch(l.child_slot) + at,
                        .bytes = p.bytes,
                        .reduce = true,
                        .reduce_offset = at});
    } else {
      if (l.parent >= 0)
        add(out.receives, {.peer = rank_at(l.parent, tree),
                           .src_offset = at,
                           .dst_offset = at,
                           .bytes = p.bytes});
      for (const int c : l.children)
        if (c >= 0)
          add(out.sends,
              {.peer = rank_at(c, tree), .src_offset = at, .dst_offset = at, .bytes = p.bytes});
    }
  }

  void peers(int rank, std::vector<int>& out) const override {
    out.clear();
    for (int tree = 0; tree < 2; ++tree) {
      const Links l = links_at(position(rank, tree), ranks());
      if (l.parent >= 0) out.push_back(rank_at(l.parent, tree));
      for (const int c : l.children)
        if (c >= 0) out.push_back(rank_at(c, tree));
    }
    normalize_peers(out);
  }

  std::vector<Range> inputs(int) const override { return {{0, bytes()}}; }
  std::vector<Range> outputs(int) const override { return {{0, bytes()}}; }

 private:
  int position(int rank, int tree) const { return tree == 0 ? rank : mod(rank + 1, ranks()); }
  int rank_at(int position, int tree) const {
    return tree == 0 ? position : mod(position - 1, ranks());
  }
  std::uint64_t scratch(int slot) const { return bytes() * static_cast<std::uint64_t>(1 + slot); }

  int pieces_ = 1;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_tree(const PlanOptions& options) {
  return std::make_unique<Tree>(options);
}

}  // namespace rocehil::traffic::plan
