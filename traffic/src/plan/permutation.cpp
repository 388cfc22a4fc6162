// Permutation traffic: every rank sends its message to one other rank and receives from one
// other, the mapping a single cycle drawn from the seed (Sattolo's shuffle), so no rank talks to
// itself and the same seed gives the same pairs. O(N) memory: the mapping and its inverse.
#include <random>

#include "plan/plan_kinds.hpp"

namespace rocehil::traffic::plan {

namespace {

class Permutation final : public CollectivePlan {
 public:
  explicit Permutation(const PlanOptions& o)
      : CollectivePlan(o),
        to_(static_cast<std::size_t>(o.ranks)),
        from_(static_cast<std::size_t>(o.ranks)) {
    for (int r = 0; r < o.ranks; ++r) to_[static_cast<std::size_t>(r)] = r;
    // std::mt19937_64 is specified exactly, so a seed means the same cycle on every platform;
    // the index is drawn by hand because uniform_int_distribution is not.
    std::mt19937_64 random(o.seed);
    for (std::size_t i = to_.size() - 1; i > 0; --i) {
      const std::size_t j = static_cast<std::size_t>(random() % i);  // j < i: one cycle
      std::swap(to_[i], to_[j]);
    }
    for (int r = 0; r < o.ranks; ++r) from_[static_cast<std::size_t>(to_[r])] = r;
  }

  std::uint64_t region_bytes() const override { return 2 * bytes(); }
  int steps(int) const override { return 1; }

  void step(int rank, int index, Step& out) const override {
    check_step(rank, index);
    out.clear();
    const auto r = static_cast<std::size_t>(rank);
    add(out.sends, {.peer = to_[r], .src_offset = 0, .dst_offset = bytes(), .bytes = bytes()});
    add(out.receives, {.peer = from_[r], .src_offset = 0, .dst_offset = bytes(), .bytes = bytes()});
  }

  void peers(int rank, std::vector<int>& out) const override {
    const auto r = static_cast<std::size_t>(rank);
    out = {to_[r], from_[r]};
    normalize_peers(out);
  }

  std::vector<Range> inputs(int) const override { return {{0, bytes()}}; }
  std::vector<Range> outputs(int) const override { return {{bytes(), bytes()}}; }

 private:
  std::vector<int> to_, from_;
};

}  // namespace

std::unique_ptr<CollectivePlan> make_permutation(const PlanOptions& options) {
  return std::make_unique<Permutation>(options);
}

}  // namespace rocehil::traffic::plan
