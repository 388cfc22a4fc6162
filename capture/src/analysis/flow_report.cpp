#include "analysis/flow_report.hpp"

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "analysis/radix_sort.hpp"
#include "analysis/zeroed_pages.hpp"
#include "rocehil/common/byte_order.hpp"

namespace rocehil::capture {

namespace {

IpAddress address_of(std::uint64_t high, std::uint64_t low) noexcept {
  IpAddress a;
  store_be64(a.bytes.data(), high);
  store_be64(a.bytes.data() + 8, low);
  return a;
}

// A flow's place in the report, made straight from its table slot: descending bytes, then
// ascending (source, destination, QP) so equal flows always list the same way. Sorting these
// compact integer keys and then building each Flow once, in order, is several times faster than
// building the flows and sorting them with byte-array comparisons, which matters at 100k+ flows.
struct FlowRef {
  const FlowState* state;
  const FlowEvents* events;  // null for the many flows without a loss or NAK
};
struct FlowOrder {
  std::uint64_t bytes;
  std::array<std::uint64_t, 4> words;  // order_words()
  std::uint32_t dest_qp;
  std::uint32_t ref;  // index of the flow's FlowRef

  FlowKey key() const noexcept {
    return {address_of(words[0], words[1]), address_of(words[2], words[3]), dest_qp};
  }
  bool operator<(const FlowOrder& y) const noexcept {
    if (bytes != y.bytes) return bytes > y.bytes;
    // Word by word: std::array's operators compare through memcmp, which is bytewise (wrong
    // order on little-endian words) and several times slower here.
    for (std::size_t i = 0; i < 4; ++i)
      if (words[i] != y.words[i]) return words[i] < y.words[i];
    return dest_qp < y.dest_qp;
  }
};
// The same order when every flow is IPv4 (nearly every capture): both addresses fit one word,
// and a key half the size sorts in about half the time at 178k flows.
struct V4FlowOrder {
  std::uint64_t bytes;
  std::uint64_t addresses;  // source << 32 | destination, as numbers
  std::uint32_t dest_qp;
  std::uint32_t ref;

  FlowKey key() const noexcept {
    constexpr std::uint64_t v4_mapped = std::uint64_t{0xffff} << 32;
    return {address_of(0, v4_mapped | addresses >> 32),
            address_of(0, v4_mapped | (addresses & 0xffffffff)), dest_qp};
  }
  bool operator<(const V4FlowOrder& y) const noexcept {
    if (bytes != y.bytes) return bytes > y.bytes;
    if (addresses != y.addresses) return addresses < y.addresses;
    return dest_qp < y.dest_qp;
  }
};

template <class Order, class Key>
void collect(const FlowTables<Key>& tables, std::vector<Order>& order, std::vector<FlowRef>& refs) {
  tables.state.for_each([&](const Key& k, const FlowState& s) {
    const auto ref = static_cast<std::uint32_t>(refs.size());
    if constexpr (std::is_same_v<Order, V4FlowOrder>) {
      order.push_back({s.bytes, k.order_word(), k.dest_qp, ref});
    } else {
      order.push_back({s.bytes, k.order_words(), k.dest_qp, ref});
    }
    refs.push_back({&s, tables.events.size() > 0 ? tables.events.find(k) : nullptr});
  });
}

void sort_flows(std::vector<FlowOrder>& order) {
  std::sort(order.begin(), order.end());
}
void sort_flows(std::vector<V4FlowOrder>& order) {
  radix_sort(order, [](const V4FlowOrder& o) {
    return std::array<std::uint64_t, 3>{~o.bytes, o.addresses, o.dest_qp};
  });
}

// Sorts `order` and builds the report's flows from it.
template <class Order>
std::vector<Flow> build_in_order(std::vector<Order>& order, const std::vector<FlowRef>& refs) {
  sort_flows(order);
  const std::size_t n = order.size();
  std::vector<Flow> flows;
  flows.reserve(n);
  prepare_pages(flows.data(), n * sizeof(Flow));
  const FlowEvents none;
  // In report order the flows' slots are visited at random: each is asked for a few flows
  // ahead (its reference a few more), or the loop waits on a miss per flow (43% of its time at
  // 178k flows).
  constexpr std::size_t state_ahead = 8, ref_ahead = 16;
  for (std::size_t j = 0; j < n; ++j) {
    if (j + ref_ahead < n) __builtin_prefetch(&refs[order[j + ref_ahead].ref]);
    if (j + state_ahead < n) __builtin_prefetch(refs[order[j + state_ahead].ref].state);
    const Order& o = order[j];
    const FlowState& s = *refs[o.ref].state;
    const FlowEvents& e = refs[o.ref].events ? *refs[o.ref].events : none;
    flows.push_back({o.key(), FlowStats{s.packets, s.bytes, s.ecn_ce, e.psn_gaps, e.retransmits,
                                        e.naks, s.first_ns, s.last_ns, s.udp_sport()}});
  }
  return flows;
}

}  // namespace

std::vector<Flow> flows_in_order(std::span<const FlowTables<V4Key>> v4,
                                 std::span<const FlowTables<V6Key>> v6) {
  std::size_t v4_flows = 0, v6_flows = 0;
  for (const auto& t : v4) v4_flows += t.state.size();
  for (const auto& t : v6) v6_flows += t.state.size();
  const std::size_t n = v4_flows + v6_flows;
  std::vector<FlowRef> refs;
  refs.reserve(n);
  prepare_pages(refs.data(), n * sizeof(FlowRef));
  if (v6_flows == 0) {
    std::vector<V4FlowOrder> order;
    order.reserve(n);
    prepare_pages(order.data(), n * sizeof(V4FlowOrder));
    for (const auto& t : v4) collect(t, order, refs);
    return build_in_order(order, refs);
  }
  std::vector<FlowOrder> order;
  order.reserve(n);
  prepare_pages(order.data(), n * sizeof(FlowOrder));
  for (const auto& t : v4) collect(t, order, refs);
  for (const auto& t : v6) collect(t, order, refs);
  return build_in_order(order, refs);
}

}  // namespace rocehil::capture
