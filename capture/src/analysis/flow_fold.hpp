#pragma once

// Joining the flow tables of a capture file's parts, each read by its own thread, into one
// (Analyzer::fold): counts add, PSN judgements join at each cut, and the flows that were
// resending across a cut are followed again through the part after it. The flows are merged in
// shards by hash, each shard by one thread at a time through every part in order, so no two
// threads ever touch one table.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/flow_tables.hpp"
#include "rocehil/capture/frame.hpp"

namespace rocehil::capture {

// A later part's first request of a flow: judged against the earlier parts' state when folded.
template <class Key>
struct FlowHead {
  Key key;
  std::uint32_t psn = 0;
};

// Feeds a part's frames again, in order, to `sink` until it returns false (Analyzer::Replay).
using FramesAgain = std::function<void(const std::function<bool(std::span<const Frame>)>& sink)>;

// One part's flows, as fold_flows takes them; the part must outlive the fold.
struct PartFlows {
  const FlowTables<V4Key>* v4 = nullptr;
  const FlowTables<V6Key>* v6 = nullptr;
  // Each flow's first request in the part; null for the first part of the capture.
  const std::vector<FlowHead<V4Key>>* v4_heads = nullptr;
  const std::vector<FlowHead<V6Key>>* v6_heads = nullptr;
  FramesAgain frames_again;
};

// Folded flows: 2^bits shards of each family, each flow in the shard its hash's top bits name.
struct FlowShards {
  unsigned bits = 0;
  std::vector<FlowTables<V4Key>> v4;
  std::vector<FlowTables<V6Key>> v6;
  bool empty() const noexcept { return v4.empty(); }
};

// How many shards (as bits of the hash) a fold on `threads` threads uses: one (0 bits) below 4
// threads or 4 CPUs this process may run on (there a serial merge, with the replays beside it
// on the other CPU, is faster than merging the first part again by shards), else up to 16.
unsigned shard_bits_for(unsigned threads);

// Folds `parts`, in capture order, into `whole`. When `whole` has no tables yet, it gets
// 2^whole.bits of them, sized for the largest part, and parts[0] is the capture's first part
// (no heads); with one shard the caller may give the first part's own tables instead. Each
// replayed flow takes the state its replay will leave it in (the part's last, if any of its
// requests passes the PSN reached before the cut; that PSN otherwise), and the replays run on
// threads of their own, each started once every shard has judged its part's heads. Returns
// false when a replay left a flow in another state (its PSNs spread over half the PSN space
// across a cut): the counts after that cut are then not exact. With one part after the first,
// that flow's state is set right, so the fold stays exact.
bool fold_flows(FlowShards& whole, std::span<const PartFlows> parts, unsigned threads);

// Adds `theirs` to `mine` flow by flow, with no PSN join across them (Analyzer::combine).
void add_flows(FlowTables<V4Key>& mine, const FlowTables<V4Key>& theirs);
void add_flows(FlowTables<V6Key>& mine, const FlowTables<V6Key>& theirs);

}  // namespace rocehil::capture
