#pragma once

// The writer's side of a lossless switch's shared counters (rocehil/testbed/shared_counters.hpp
// is the readers'): the file's layout and the mapping the forwarding process counts into.
//
// The file: a 64-byte header (magic, layout version, the header's and a port's size, the port
// count), then one PortCounts per port. Every counter is a lock-free std::atomic<uint64_t>, so a
// reader in another process sees whole values, never torn ones, without any lock; there is one
// writer, so counting is a relaxed load and store (bump), no locked instruction on the hot path.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "rocehil/testbed/shared_counters.hpp"

namespace rocehil::testbed::dataplane {

using Counter = std::atomic<std::uint64_t>;
static_assert(Counter::is_always_lock_free,
              "the counters are shared between processes: they must not need a lock");

// Counts `n` more. Only the one writer may bump a counter; readers load it.
inline void bump(Counter& c, std::uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct QueueCounts {
  Counter packets, bytes, dropped, dropped_bytes, ecn_marked, depth_bytes, peak_depth_bytes;
};

struct PriorityCounts {
  Counter pfc_sent, pfc_received;  // XOFF frames (quanta > 0) sent out of / received on the port
  Counter xon_sent, xon_received;  // quanta 0
  Counter paused_ns;  // time this port's egress queue of the priority was held by PFC received
  Counter ingress_bytes, peak_ingress_bytes;  // bytes from this port held in the switch now / most
  Counter lossless_drops;  // a lossless packet dropped past XOFF + headroom: a defect
  Counter storms_detected, storms_restored, storm_drops;  // the PFC watchdog
};

// WRED's ramp from Kmin to Kmax in sixteenths: the ECN-capable packets that met the queue at a
// depth in each (and were drawn against its probability) and those marked. A test holds the
// marked fraction of each sixteenth to the probability the knobs give there, however the depth
// wandered while it was measured.
inline constexpr int wred_buckets = 16;
struct WredCounts {
  Counter seen[wred_buckets], marked[wred_buckets];
};

struct PortCounts {
  char ifname[16];  // NUL-terminated (IFNAMSIZ), written once when the file is made
  Counter ifindex;
  Counter rx_packets, rx_bytes, forwarded, no_route, unresolved, ttl_expired;
  QueueCounts queue[8];        // by traffic class
  PriorityCounts priority[8];  // by priority
  WredCounts wred[8];          // by traffic class
  // Frames the kernel dropped at the port's packet socket, full while the process was away (a
  // shared 2-core machine): they reached no queue and no PFC account. Last, so the counters
  // before keep their place.
  Counter socket_drops;
};
static_assert(std::is_standard_layout_v<PortCounts>, "PortCounts is a file's layout");

struct SharedCountersHeader {
  char magic[8];  // shared_counters_magic
  std::uint32_t version;
  std::uint32_t header_size;  // sizeof(SharedCountersHeader): where the first port starts
  std::uint32_t port_size;    // sizeof(PortCounts)
  std::uint32_t port_count;
  std::uint8_t reserved[40];
};
static_assert(sizeof(SharedCountersHeader) == 64, "the ports start on a cache line");
static_assert(std::is_standard_layout_v<SharedCountersHeader>);

inline constexpr char shared_counters_magic[8] = {'R', 'H', 'I', 'L', 'C', 'N', 'T', 'S'};
// Raised whenever PortCounts or the header change meaning (a field added, moved or redefined),
// so an older reader refuses a newer file instead of misreading it.
inline constexpr std::uint32_t shared_counters_version = 3;  // 2: WRED's ramp; 3: socket drops

// The forwarding process's side: makes the file (replacing one already there) with a port per
// name in `ifnames`, all counters 0, and keeps it mapped read-write. The file is written under a
// temporary name and renamed into place, so a reader never sees it half made. Each port's
// ifindex is the one the interface has in the caller's namespace (0 when it has none: the caller
// may store it later). Destruction unmaps and leaves the file, for a last reading; `testbed down`
// removes it. Throws rocehil::Error (infrastructure) naming `path` when it cannot be made, and
// (bad input) for an interface name longer than 15 characters.
class SharedCountersWriter {
 public:
  SharedCountersWriter(const std::string& path, const std::vector<std::string>& ifnames);
  SharedCountersWriter(SharedCountersWriter&& other) noexcept;
  SharedCountersWriter& operator=(SharedCountersWriter&& other) noexcept;
  SharedCountersWriter(const SharedCountersWriter&) = delete;
  SharedCountersWriter& operator=(const SharedCountersWriter&) = delete;
  ~SharedCountersWriter();

  // `index` in [0, port_count()), in the order of `ifnames`; unchecked (the forwarding loop's
  // hot path), as a vector's operator[].
  PortCounts& port(int index) { return ports_[index]; }
  int port_count() const { return port_count_; }
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  void* mapping_ = nullptr;
  std::size_t size_ = 0;
  PortCounts* ports_ = nullptr;
  int port_count_ = 0;
};

// The size of a file of `ports` ports.
inline std::size_t shared_counters_size(std::size_t ports) {
  return sizeof(SharedCountersHeader) + ports * sizeof(PortCounts);
}

}  // namespace rocehil::testbed::dataplane
