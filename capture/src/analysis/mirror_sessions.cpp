#include "analysis/mirror_sessions.hpp"

#include <algorithm>
#include <tuple>

namespace rocehil::capture {

namespace {

constexpr std::size_t max_listed = 256;  // ports and VLANs listed per session

// Sequence numbers compare with 32-bit wrap: b is ahead of a when less than half the space on.
constexpr bool ahead(std::uint32_t a, std::uint32_t b) noexcept {
  return static_cast<std::uint32_t>(b - a) < 0x8000'0000u;
}

template <class Key>
void count_in(std::vector<std::pair<Key, std::uint64_t>>& list, Key key, std::uint64_t n) {
  for (auto& [k, count] : list)
    if (k == key) {
      count += n;
      return;
    }
  if (list.size() < max_listed) list.emplace_back(key, n);
}

template <class Key>
void add_list(std::vector<std::pair<Key, std::uint64_t>>& into,
              const std::vector<std::pair<Key, std::uint64_t>>& from) {
  for (const auto& [k, n] : from) count_in(into, k, n);
}

// Everything but the sequence numbers: counts add, clock offsets widen.
void add_counts(MirrorSession& a, const MirrorSession& b) {
  a.frames += b.frames;
  a.bytes += b.bytes;
  a.truncated += b.truncated;
  if (b.switch_timed > 0) {
    a.min_clock_offset_ns = a.switch_timed > 0
                                ? std::min(a.min_clock_offset_ns, b.min_clock_offset_ns)
                                : b.min_clock_offset_ns;
    a.max_clock_offset_ns = a.switch_timed > 0
                                ? std::max(a.max_clock_offset_ns, b.max_clock_offset_ns)
                                : b.max_clock_offset_ns;
    a.granularity = b.granularity;
  }
  a.switch_timed += b.switch_timed;
  a.clock_too_far += b.clock_too_far;
  add_list(a.ports, b.ports);
  add_list(a.vlans, b.vlans);
}

}  // namespace

MirrorSession& MirrorSessions::find(MirrorKind kind, const IpAddress& source,
                                    const IpAddress& collector, bool has_id, std::uint32_t id) {
  const auto is = [&](const MirrorSession& s) {
    return s.kind == kind && s.has_id == has_id && s.id == id && s.source == source &&
           s.collector == collector;
  };
  if (last_ < sessions_.size() && is(sessions_[last_])) return sessions_[last_];
  for (std::size_t i = 0; i < sessions_.size(); ++i)
    if (is(sessions_[i])) {
      last_ = i;
      return sessions_[i];
    }
  MirrorSession& s = sessions_.emplace_back();
  s.kind = kind;
  s.source = source;
  s.collector = collector;
  s.has_id = has_id;
  s.id = id;
  last_ = sessions_.size() - 1;
  return s;
}

void MirrorSessions::count_sequence(MirrorSession& s, std::uint32_t sequence) {
  if (s.sequenced == 0) {
    s.first_sequence = s.last_sequence = sequence;
  } else if (ahead(s.last_sequence + 1, sequence)) {
    s.gaps += sequence - (s.last_sequence + 1);
    s.last_sequence = sequence;
  } else {
    ++s.late;
  }
  ++s.sequenced;
}

void MirrorSessions::count_port(MirrorSession& s, std::uint32_t port) {
  count_in(s.ports, port, 1);
}

void MirrorSessions::count_vlan(MirrorSession& s, std::uint16_t vlan) {
  count_in(s.vlans, vlan, 1);
}

// `b`'s session merged into this set's: the counts added, and its sequence numbers taken over
// whole when this set's had none. Returns the session when both numbered frames (the caller
// joins the two runs of numbers), else nullptr.
MirrorSession* MirrorSessions::merge(const MirrorSession& b) {
  MirrorSession& a = find(b.kind, b.source, b.collector, b.has_id, b.id);
  add_counts(a, b);
  if (b.sequenced == 0) return nullptr;
  if (a.sequenced == 0) {
    a.first_sequence = b.first_sequence;
    a.last_sequence = b.last_sequence;
    a.gaps = b.gaps;
    a.late = b.late;
    a.sequenced = b.sequenced;
    return nullptr;
  }
  return &a;
}

void MirrorSessions::append(const MirrorSessions& later) {
  for (const MirrorSession& b : later.sessions_) {
    MirrorSession* joined = merge(b);
    if (!joined) continue;
    MirrorSession& a = *joined;
    // The later part's first number is judged against this part's highest, as one pass does.
    if (ahead(a.last_sequence + 1, b.first_sequence)) {
      a.gaps += b.first_sequence - (a.last_sequence + 1);
    } else {
      ++a.late;
    }
    if (ahead(a.last_sequence, b.last_sequence)) a.last_sequence = b.last_sequence;
    a.gaps += b.gaps;
    a.late += b.late;
    a.sequenced += b.sequenced;
  }
}

void MirrorSessions::add(const MirrorSessions& other) {
  for (const MirrorSession& b : other.sessions_) {
    MirrorSession* joined = merge(b);
    if (!joined) continue;
    MirrorSession& a = *joined;
    // Two workers each saw part of one session: the frames it should have had are the span of
    // numbers both saw, those it had are both workers' frames.
    if (ahead(b.first_sequence, a.first_sequence)) a.first_sequence = b.first_sequence;
    if (ahead(a.last_sequence, b.last_sequence)) a.last_sequence = b.last_sequence;
    a.sequenced += b.sequenced;
    const std::uint64_t span = std::uint64_t{a.last_sequence - a.first_sequence} + 1;
    a.gaps = span > a.sequenced ? span - a.sequenced : 0;
    a.late = a.sequenced > span ? a.sequenced - span : 0;
  }
}

std::vector<MirrorSession> MirrorSessions::result() const {
  std::vector<MirrorSession> out = sessions_;
  std::sort(out.begin(), out.end(), [](const MirrorSession& a, const MirrorSession& b) {
    return std::tie(a.source.bytes, a.collector.bytes, a.kind, a.has_id, a.id) <
           std::tie(b.source.bytes, b.collector.bytes, b.kind, b.has_id, b.id);
  });
  for (MirrorSession& s : out) {
    std::sort(s.ports.begin(), s.ports.end());
    std::sort(s.vlans.begin(), s.vlans.end());
  }
  return out;
}

}  // namespace rocehil::capture

namespace rocehil::capture {

std::uint64_t Analysis::Mirrors::lost() const noexcept {
  std::uint64_t n = 0;
  for (const MirrorSession& s : sessions) n += s.lost();
  return n;
}

double Analysis::Mirrors::coverage() const noexcept {
  std::uint64_t sequenced = 0;
  for (const MirrorSession& s : sessions) sequenced += s.sequenced;
  const std::uint64_t total = sequenced + lost();
  return total == 0 ? 1.0 : static_cast<double>(sequenced) / static_cast<double>(total);
}

}  // namespace rocehil::capture
