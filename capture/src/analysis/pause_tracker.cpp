#include "analysis/pause_tracker.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "rocehil/common/byte_order.hpp"
#include "rocehil/common/units.hpp"

namespace rocehil::capture {

namespace {

std::uint64_t mac_key(const std::uint8_t* mac) noexcept {
  std::uint64_t key = 0;
  for (int i = 0; i < 6; ++i) key = key << 8 | mac[i];
  return key;
}

MacAddress mac_of(std::uint64_t key) noexcept {
  MacAddress mac{};
  for (int i = 5; i >= 0; --i, key >>= 8)
    mac[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(key & 0xff);
  return mac;
}

}  // namespace

PauseTracker::PauseTracker(const AnalyzerOptions& options)
    : quantum_ns_(pause_quanta_to_ns(1, options.link_gbps)),
      storm_ns_(options.storm_ms * 1e6),
      all_from_spine_(options.direction == MirrorDirection::spine_to_leaf) {
  spine_keys_.reserve(options.spine_macs.size());
  for (const MacAddress& mac : options.spine_macs) spine_keys_.push_back(mac_key(mac.data()));
}

PauseTracker::Sender& PauseTracker::sender(const std::uint8_t* source_mac, std::uint64_t& key) {
  key = mac_key(source_mac);
  Sender& s = senders_.find_or_insert(key, MacHash{}(key));
  if (!s.known) {
    s.known = true;
    s.from_spine = all_from_spine_ ||
                   std::find(spine_keys_.begin(), spine_keys_.end(), key) != spine_keys_.end();
  }
  return s;
}

double PauseTracker::offset(std::uint64_t ts_ns) {
  if (!started_) {
    started_ = true;
    origin_ns_ = ts_ns;
  }
  // Frames stamped before the first give negative offsets: the subtraction wraps, the cast
  // brings the sign back.
  return static_cast<double>(static_cast<std::int64_t>(ts_ns - origin_ns_));
}

void PauseTracker::pfc(std::uint64_t ts_ns, const std::uint8_t* source_mac,
                       std::uint16_t class_enable, const std::uint8_t* quanta_be,
                       double quantum_ns) {
  std::uint64_t key = 0;
  Sender& s = sender(source_mac, key);
  const double t = offset(ts_ns);
  bool any_xoff = false;
  for (std::size_t p = 0; p < pfc_priorities; ++p) {
    if (!(class_enable & (1u << p))) continue;
    const std::uint16_t quanta = load_be16(quanta_be + 2 * p);
    any_xoff |= quanta > 0;
    update(s, key, p, t, quanta, quantum_ns);
  }
  if (s.from_spine) {
    ++closed_.from_spine.frames;
    closed_.from_spine.xoff += any_xoff;
  }
}

void PauseTracker::pause(std::uint64_t ts_ns, const std::uint8_t* source_mac, std::uint16_t quanta,
                         double quantum_ns) {
  std::uint64_t key = 0;
  Sender& s = sender(source_mac, key);
  update(s, key, pause_8023x, offset(ts_ns), quanta, quantum_ns);
  if (s.from_spine) {
    ++closed_.from_spine.frames;
    closed_.from_spine.xoff += quanta > 0;
  }
}

void PauseTracker::update(Sender& s, std::uint64_t key, std::size_t cls, double t,
                          std::uint16_t quanta, double quantum_ns) {
  ClassState& c = s.classes[cls];
  if (c.seen && t < c.clock) t = c.clock;
  c.clock = t;
  c.seen = true;
  if (c.paused && t >= c.expiry) {  // it ran out before this frame
    close(closed_, key, s.from_spine, cls, c.start, c.expiry, false);
    c.paused = false;
  }
  if (quanta == 0) {  // XON
    if (c.paused) close(closed_, key, s.from_spine, cls, c.start, t, false);
    c.paused = false;
    return;
  }
  if (!c.paused) {
    c.paused = true;
    c.start = t;
  }
  c.expiry = t + quanta * quantum_ns;
}

void PauseTracker::close(Totals& totals, std::uint64_t key, bool from_spine, std::size_t cls,
                         double start, double end, bool ongoing) const {
  const double length = std::max(0.0, end - start);
  ClassTotals& c = totals.classes[cls];
  c.paused_ns += length;
  c.longest_pause_ns = std::max(c.longest_pause_ns, length);
  const bool storm = length > storm_ns_;
  c.storms += storm;
  if (from_spine) {
    totals.from_spine.paused_ns += length;
    totals.from_spine.storms += storm;
  }
  if (!storm) return;
  totals.storms.push_back({.priority = static_cast<std::uint8_t>(cls),
                           .source_mac = mac_of(key),
                           .start_ns = origin_ns_ + static_cast<std::uint64_t>(std::llround(start)),
                           .end_ns = origin_ns_ + static_cast<std::uint64_t>(std::llround(end)),
                           .duration_ns = length,
                           .ongoing = ongoing,
                           .from_spine = from_spine});
}

namespace {

void sort_storms(std::vector<PfcStorm>& storms) {
  std::sort(storms.begin(), storms.end(), [](const PfcStorm& x, const PfcStorm& y) {
    return std::tie(x.start_ns, x.priority, x.source_mac) <
           std::tie(y.start_ns, y.priority, y.source_mac);
  });
}

}  // namespace

void PauseTracker::add(Totals& into, Totals&& more) {
  for (std::size_t cls = 0; cls < class_count; ++cls) {
    ClassTotals& a = into.classes[cls];
    const ClassTotals& b = more.classes[cls];
    a.paused_ns += b.paused_ns;
    a.longest_pause_ns = std::max(a.longest_pause_ns, b.longest_pause_ns);
    a.storms += b.storms;
  }
  into.storms.insert(into.storms.end(), more.storms.begin(), more.storms.end());
  sort_storms(into.storms);
  into.from_spine.frames += more.from_spine.frames;
  into.from_spine.xoff += more.from_spine.xoff;
  into.from_spine.paused_ns += more.from_spine.paused_ns;
  into.from_spine.storms += more.from_spine.storms;
}

PauseTracker::Totals PauseTracker::totals(std::uint64_t window_start_ns,
                                          std::uint64_t window_end_ns) const {
  Totals out = closed_;
  if (!started_) return out;
  const double window_start =
      static_cast<double>(static_cast<std::int64_t>(window_start_ns - origin_ns_));
  const double window_end =
      static_cast<double>(static_cast<std::int64_t>(window_end_ns - origin_ns_));
  // Pauses that ended during add() began and ended at frame times, inside the window by its
  // definition; only the ones still open need clipping.
  senders_.for_each([&](std::uint64_t key, const Sender& s) {
    for (std::size_t cls = 0; cls < class_count; ++cls) {
      const ClassState& c = s.classes[cls];
      if (!c.paused) continue;
      const double start = std::max(c.start, window_start);
      const double end = std::min(c.expiry, window_end);
      close(out, key, s.from_spine, cls, start, std::max(start, end), c.expiry > window_end);
    }
  });
  sort_storms(out.storms);
  return out;
}

}  // namespace rocehil::capture
