#include "dataplane/fib.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace rocehil::testbed::dataplane {
namespace {

std::uint32_t fib_prefix_mask(int length) {
  if (length <= 0) return 0;
  if (length >= 32) return 0xffffffffu;
  return ~(0xffffffffu >> length);
}

// Lookup's order: local routes first, longer prefixes first, then by prefix for the binary
// search; a stable sort keeps equal routes in the order given.
bool fib_lookup_order(const Route& a, const Route& b) {
  const bool a_local = a.kind == RouteKind::local;
  const bool b_local = b.kind == RouteKind::local;
  return std::tuple(!a_local, -a.length, a.prefix) < std::tuple(!b_local, -b.length, b.prefix);
}

}  // namespace

Fib::Fib(std::vector<Route> routes) : routes_(std::move(routes)) {
  for (Route& r : routes_) {
    r.length = std::clamp(r.length, 0, 32);
    r.prefix &= fib_prefix_mask(r.length);
  }
  std::stable_sort(routes_.begin(), routes_.end(), fib_lookup_order);
  for (std::size_t i = 0; i < routes_.size();) {
    const bool local = routes_[i].kind == RouteKind::local;
    const int length = routes_[i].length;
    std::size_t end = i + 1;
    while (end < routes_.size() && (routes_[end].kind == RouteKind::local) == local &&
           routes_[end].length == length)
      ++end;
    groups_.push_back({i, end, fib_prefix_mask(length)});
    i = end;
  }
}

const Route* Fib::lookup(std::uint32_t destination) const noexcept {
  for (const Group& g : groups_) {
    const std::uint32_t wanted = destination & g.mask;
    const auto first = routes_.begin() + static_cast<std::ptrdiff_t>(g.begin);
    const auto last = routes_.begin() + static_cast<std::ptrdiff_t>(g.end);
    const auto it = std::lower_bound(first, last, wanted,
                                     [](const Route& r, std::uint32_t p) { return r.prefix < p; });
    if (it != last && it->prefix == wanted) return &*it;
  }
  return nullptr;
}

bool Fib::is_local(std::uint32_t destination) const noexcept {
  const Route* r = lookup(destination);
  return r != nullptr && r->kind == RouteKind::local;
}

const NextHop& pick_next_hop(const Route& route, std::uint32_t flow_hash) noexcept {
  static const NextHop nowhere{};
  if (route.hops.empty()) return nowhere;
  return route.hops[flow_hash % route.hops.size()];
}

}  // namespace rocehil::testbed::dataplane
