#include "analysis/flow_fold.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include <sched.h>

#include "analysis/async_or_deferred.hpp"
#include "analysis/request_psns.hpp"
#include "frames/frame_layout.hpp"

namespace rocehil::capture {

namespace w = rocehil::wire;

namespace {

// One PSN sequence's judge: the highest request so far and the judgements it made.
struct PsnJudge {
  std::uint32_t highest = 0;
  std::uint32_t span = 0;  // 0: no request yet
  std::uint64_t psn_gaps = 0;
  std::uint64_t retransmits = 0;

  void judge(std::uint32_t psn, std::uint32_t request_span) {
    switch (judge_psn(highest, span, psn)) {
      case PsnVerdict::retransmit: ++retransmits; return;
      case PsnVerdict::gap: ++psn_gaps; break;
      case PsnVerdict::first:
      case PsnVerdict::in_order: break;
    }
    highest = psn & 0xffffff;
    span = request_span & 0xffffff;
  }
  bool same_state(const PsnJudge& o) const { return highest == o.highest && span == o.span; }
};

// A flow followed again through a later part's frames: `truth` from the state the earlier parts
// left, `part` from nothing, as the part's own analyzer judged. Once the two hold the same
// highest PSN they judge every later request alike, so the part's own counts are right from
// there and the replay of this flow is over.
struct PsnReplay {
  PsnJudge truth;
  PsnJudge part;
  bool joined = false;
  // The state the fold gave the flow before its replay ran.
  std::uint32_t predicted_highest = 0;
  std::uint32_t predicted_span = 0;
  // The flow's packets in the later part not yet replayed: at 0 the flow has nothing left to
  // judge, so the replay need not read on for it (a flow that never sends a new request after
  // its resends would otherwise have the whole part read again).
  std::uint64_t packets_left = 0;
  bool done() const noexcept { return joined || packets_left == 0; }
};

template <class Key>
using ReplayTable = FlatTable<Key, PsnReplay, KeyHash<Key>>;

std::size_t shard_of(std::uint64_t hash, unsigned bits) noexcept {
  return bits == 0 ? 0 : static_cast<std::size_t>(hash >> (64 - bits));
}

// A flow's counts add. Its PSN state joins at the boundary: the later part judged its first
// request as a flow's first (nothing before it), so that one request is judged again here
// against the state the earlier parts left; from the next request on, the later part's own
// judgements are the ones a single pass would have made, because both passes then hold the
// same highest PSN. That fails only when the first request is behind that state (a
// retransmission across the boundary): such flows are followed again (follow, finish_replays).
// `which`: the places in `heads` of this shard's heads; null for all of them (one shard).
template <class Key>
void judge_heads(FlowTables<Key>& mine, const FlowTables<Key>& theirs,
                 const std::vector<FlowHead<Key>>& heads, const std::vector<std::uint32_t>* which,
                 std::unique_ptr<ReplayTable<Key>>& replays) {
  const std::size_t n = which ? which->size() : heads.size();
  const auto at = [&](std::size_t i) -> const FlowHead<Key>& {
    return heads[which ? (*which)[i] : i];
  };
  // The heads come in the part's order, each a miss in `mine`: loaded a few heads ahead.
  constexpr std::size_t ahead = 16;
  for (std::size_t i = 0; i < std::min(ahead, n); ++i) mine.state.prefetch(at(i).key.hash());
  for (std::size_t i = 0; i < n; ++i) {
    if (i + ahead < n) mine.state.prefetch(at(i + ahead).key.hash());
    const FlowHead<Key>& head = at(i);
    const FlowState* m = mine.state.find(head.key);
    if (!m) continue;
    const std::uint32_t highest = m->highest_psn();
    const std::uint32_t span = m->highest_span();
    switch (judge_psn(highest, span, head.psn)) {
      case PsnVerdict::gap: ++mine.events[head.key].psn_gaps; break;
      case PsnVerdict::retransmit: {
        const FlowState& s = *theirs.state.find(head.key);
        // The part's last state if any of its requests passed the one before the boundary:
        // then the replay joins the part's judgements (at the first such request, where both
        // take its PSN). Otherwise the state before the boundary stands.
        const bool passes = judge_psn(highest, span, s.highest_psn()) != PsnVerdict::retransmit;
        if (!replays) replays = std::make_unique<ReplayTable<Key>>(16);
        (*replays)[head.key] = PsnReplay{{highest, span, 0, 0},
                                         {},
                                         false,
                                         passes ? s.highest_psn() : highest,
                                         passes ? s.highest_span() : span,
                                         s.packets};
        break;
      }
      case PsnVerdict::first:
      case PsnVerdict::in_order: break;
    }
  }
}

// One flow of a part into `mine`. A replayed flow takes its predicted state; its replay may be
// reading `replays` meanwhile (it writes only the judges, this reads only the prediction).
template <class Key>
void merge_flow(FlowTables<Key>& mine, const FlowTables<Key>& theirs, const Key& k,
                const FlowState& s, const ReplayTable<Key>* replays) {
  const std::uint64_t hash = k.hash();
  FlowState& m = mine.state.find_or_insert(k, hash);
  const PsnReplay* r = replays ? replays->find(k, hash) : nullptr;
  if (m.packets == 0) {
    m = s;
  } else {
    m.packets += s.packets;
    m.bytes += s.bytes;
    m.ecn_ce += s.ecn_ce;
    m.first_ns = std::min(m.first_ns, s.first_ns);
    m.last_ns = std::max(m.last_ns, s.last_ns);
    if (r) {
      m.set_highest(r->predicted_highest, r->predicted_span);
    } else if (s.highest_span() != 0) {
      m.set_highest_from(s);
    }
  }
  if (theirs.events.size() == 0) return;
  if (const FlowEvents* e = theirs.events.find(k)) {
    FlowEvents& me = mine.events[k];
    me.naks += e->naks;
    if (!r) {
      me.psn_gaps += e->psn_gaps;
      me.retransmits += e->retransmits;
    }
  }
}

// A replayed flow's judgements: the truth's up to where it joined the part's, the part's own
// after that (all of them, less those the replay made before joining). Its state is the part's
// final one when it joined, the truth's otherwise: what judge_heads predicted, unless the flow's
// PSNs spread over half the PSN space (then the truth moved on without joining). Such a flow's
// state is set right here, and false returned.
template <class Key>
bool finish_replays(FlowTables<Key>& mine, const FlowTables<Key>& theirs,
                    const ReplayTable<Key>& replays) {
  bool as_predicted = true;
  replays.for_each([&](const Key& k, const PsnReplay& r) {
    std::uint64_t gaps = r.truth.psn_gaps, retransmits = r.truth.retransmits;
    std::uint32_t highest = r.truth.highest, span = r.truth.span;
    if (r.joined) {
      const FlowState* s = theirs.state.find(k);
      highest = s->highest_psn();
      span = s->highest_span();
      const FlowEvents* e = theirs.events.find(k);
      const FlowEvents none;
      gaps += (e ? e : &none)->psn_gaps - r.part.psn_gaps;
      retransmits += (e ? e : &none)->retransmits - r.part.retransmits;
    }
    if (highest != r.predicted_highest || span != r.predicted_span) {
      as_predicted = false;
      mine.state.find(k)->set_highest(highest, span);
    }
    if (gaps == 0 && retransmits == 0) return;
    FlowEvents& e = mine.events[k];
    e.psn_gaps += gaps;
    e.retransmits += retransmits;
  });
  return as_predicted;
}

// A part's flows and heads listed by shard, once, so that each shard's thread visits only its
// own: slots of the part's state table, and places in its heads.
struct ShardLists {
  std::vector<std::vector<std::uint32_t>> slots;
  std::vector<std::vector<std::uint32_t>> heads;
};

template <class Key>
ShardLists list_by_shard(const FlowTables<Key>& t, const std::vector<FlowHead<Key>>* heads,
                         unsigned bits) {
  const std::size_t shards = std::size_t{1} << bits;
  ShardLists l;
  l.slots.resize(shards);
  l.heads.resize(shards);
  for (auto& v : l.slots) v.reserve(t.state.size() / shards * 9 / 8 + 16);
  t.state.for_each_slot([&](std::size_t i, const Key& k) {
    l.slots[shard_of(k.hash(), bits)].push_back(static_cast<std::uint32_t>(i));
  });
  if (heads) {
    for (auto& v : l.heads) v.reserve(heads->size() / shards * 9 / 8 + 16);
    for (std::size_t i = 0; i < heads->size(); ++i)
      l.heads[shard_of((*heads)[i].key.hash(), bits)].push_back(static_cast<std::uint32_t>(i));
  }
  return l;
}

// One later part's flows to follow again, by shard, and the replay following them.
struct PartReplays {
  std::vector<std::unique_ptr<ReplayTable<V4Key>>> v4;
  std::vector<std::unique_ptr<ReplayTable<V6Key>>> v6;
  std::atomic<std::size_t> shards_left{0};  // shards that have not judged the part's heads yet
  std::future<void> replay;

  std::size_t flows() const {
    std::size_t n = 0;
    for (const auto& t : v4) n += t ? t->size() : 0;
    for (const auto& t : v6) n += t ? t->size() : 0;
    return n;
  }
  // The key's hash names both its shard and its slot: computed once per replayed frame.
  template <class Key>
  PsnReplay* find(const Key& k, unsigned bits) {
    const std::uint64_t hash = k.hash();
    const auto& table = [&]() -> const std::unique_ptr<ReplayTable<Key>>& {
      if constexpr (std::is_same_v<Key, V4Key>) {
        return v4[shard_of(hash, bits)];
      } else {
        return v6[shard_of(hash, bits)];
      }
    }();
    return table ? table->find(k, hash) : nullptr;
  }
};

// One frame of a replayed part: only the requests of the flows not yet joined count. Returns
// whether one more flow is done with: its judgements rejoined, or its last packet in the later
// part was replayed.
bool replay_psns(const Frame& f, PartReplays& r, unsigned bits) {
  if (f.link_type != link_type::ethernet) return false;
  const FrameLayout l = locate_layers(f.data, f.caplen);
  if (l.kind != FrameKind::roce) return false;
  const std::uint8_t* bth = f.data + l.bth;
  const std::uint8_t opcode = bth[0];
  if (opcode == w::opcode::cnp) return false;  // as count_roce: every other packet is the flow's
  const std::uint8_t* ip = f.data + l.l3;
  PsnReplay* p = l.ip_version == 4 ? r.find(V4Key::of(ip, bth_dest_qp(bth)), bits)
                                   : r.find(V6Key::of(ip, bth_dest_qp(bth)), bits);
  if (!p || p->done()) return false;
  --p->packets_left;
  if (is_connected_request(opcode)) {
    const std::uint32_t after_bth = f.caplen - l.bth - static_cast<std::uint32_t>(w::bth_size);
    const std::uint32_t psn = bth_psn(bth);
    const std::uint32_t span = request_span(opcode, bth, after_bth);
    p->truth.judge(psn, span);
    p->part.judge(psn, span);
    p->joined = p->truth.same_state(p->part);
  }
  return p->done();
}

// Follows the part's replayed flows through its frames: their judges and nothing else.
void follow(PartReplays& r, unsigned bits, const FramesAgain& frames_again) {
  std::size_t following = r.flows();
  frames_again([&](std::span<const Frame> frames) {
    for (const Frame& f : frames) following -= replay_psns(f, r, bits);
    return following > 0;
  });
}

// Runs job(0) .. job(n - 1) on up to `threads` threads (this one among them); rethrows the
// first exception a job threw.
template <class Job>
void run_parallel(std::size_t n, std::size_t threads, const Job& job) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        job(i);
      } catch (...) {
        const std::lock_guard lock(error_lock);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < std::min(threads, n); ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had (a process limit): the ones there are do every job
    }
  }
  work();
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

// `slots`: this shard's slots of `theirs`; null for all of them (one shard).
template <class Key>
void merge_shard(FlowTables<Key>& mine, const FlowTables<Key>& theirs,
                 const std::vector<std::uint32_t>* slots, const ReplayTable<Key>* replays) {
  if (!slots) {
    theirs.state.for_each(
        [&](const Key& k, const FlowState& s) { merge_flow(mine, theirs, k, s, replays); });
    return;
  }
  for (const std::uint32_t slot : *slots)
    merge_flow(mine, theirs, theirs.state.key_at(slot), theirs.state.value_at(slot), replays);
}

}  // namespace

unsigned shard_bits_for(unsigned threads) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const unsigned usable = ::sched_getaffinity(0, sizeof cpus, &cpus) == 0
                              ? static_cast<unsigned>(CPU_COUNT(&cpus))
                              : threads;
  const unsigned n = std::min(threads, std::max(usable, 1u));
  if (n < 4) return 0;
  unsigned bits = 0;
  while (bits < 4 && (1u << bits) < n) ++bits;
  return bits;
}

bool fold_flows(FlowShards& whole, std::span<const PartFlows> parts, unsigned threads) {
  if (whole.empty()) {
    const unsigned bits = whole.bits;
    // Sized for the largest part's flows (most flows of a capture show in every part, or the
    // parts are few), so that merging seldom grows a shard's table.
    std::size_t v4_flows = 0, v6_flows = 0;
    for (const PartFlows& p : parts) {
      v4_flows = std::max(v4_flows, p.v4->state.size());
      v6_flows = std::max(v6_flows, p.v6->state.size());
    }
    for (std::size_t s = 0; s < std::size_t{1} << bits; ++s) {
      whole.v4.emplace_back(v4_flows >> bits);
      whole.v6.emplace_back(v6_flows >> bits);
    }
  }
  const unsigned bits = whole.bits;
  const std::size_t shards = whole.v4.size();
  const std::size_t workers = std::max<std::size_t>(1, threads);

  // With one shard, every flow and head is that shard's: nothing to list.
  std::vector<ShardLists> v4_lists(bits > 0 ? parts.size() : 0);
  std::vector<ShardLists> v6_lists(bits > 0 ? parts.size() : 0);
  if (bits > 0) {
    run_parallel(parts.size(), workers, [&](std::size_t k) {
      v4_lists[k] = list_by_shard(*parts[k].v4, parts[k].v4_heads, bits);
      v6_lists[k] = list_by_shard(*parts[k].v6, parts[k].v6_heads, bits);
    });
  }
  const auto slots = [&](const auto& lists, std::size_t k, std::size_t s) {
    return lists.empty() ? nullptr : &lists[k].slots[s];
  };
  const auto heads = [&](const auto& lists, std::size_t k, std::size_t s) {
    return lists.empty() ? nullptr : &lists[k].heads[s];
  };
  std::vector<std::unique_ptr<PartReplays>> replays;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    auto r = std::make_unique<PartReplays>();
    r->v4.resize(shards);
    r->v6.resize(shards);
    r->shards_left = shards;
    replays.push_back(std::move(r));
  }

  // Each shard through every part in order; a part's replay starts once every shard has
  // judged that part's heads, beside the merging of its flows and of the parts after it.
  run_parallel(shards, workers, [&](std::size_t s) {
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const PartFlows& p = parts[k];
      PartReplays& r = *replays[k];
      if (p.v4_heads) judge_heads(whole.v4[s], *p.v4, *p.v4_heads, heads(v4_lists, k, s), r.v4[s]);
      if (p.v6_heads) judge_heads(whole.v6[s], *p.v6, *p.v6_heads, heads(v6_lists, k, s), r.v6[s]);
      if (r.shards_left.fetch_sub(1) == 1 && r.flows() > 0) {
        r.replay = async_or_deferred([&r, bits, &p] { follow(r, bits, p.frames_again); });
      }
      merge_shard(whole.v4[s], *p.v4, slots(v4_lists, k, s), r.v4[s].get());
      merge_shard(whole.v6[s], *p.v6, slots(v6_lists, k, s), r.v6[s].get());
    }
  });

  bool as_predicted = true;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    PartReplays& r = *replays[k];
    if (!r.replay.valid()) continue;
    r.replay.get();  // rethrows what the replay threw (a read error)
    for (std::size_t s = 0; s < shards; ++s) {
      if (r.v4[s]) as_predicted &= finish_replays(whole.v4[s], *parts[k].v4, *r.v4[s]);
      if (r.v6[s]) as_predicted &= finish_replays(whole.v6[s], *parts[k].v6, *r.v6[s]);
    }
  }
  return as_predicted;
}

void add_flows(FlowTables<V4Key>& mine, const FlowTables<V4Key>& theirs) {
  theirs.state.for_each(
      [&](const V4Key& k, const FlowState& s) { merge_flow<V4Key>(mine, theirs, k, s, nullptr); });
}
void add_flows(FlowTables<V6Key>& mine, const FlowTables<V6Key>& theirs) {
  theirs.state.for_each(
      [&](const V6Key& k, const FlowState& s) { merge_flow<V6Key>(mine, theirs, k, s, nullptr); });
}

}  // namespace rocehil::capture
