#include "rocehil/capture/dpdk_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "dpdk/af_packet.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/headers.hpp"
#include "dpdk/port_source.hpp"
#include "live/interface_speed.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

// How this backend behaves, and why (the EAL's part is in dpdk_eal.cpp):
//
// Ports are stopped, never closed, when a source ends: rte_eth_dev_close releases the port, and
// a virtual device cannot come back in this process, so a second capture on net_af_packet0 or a
// second replay of net_pcap0 would find no port. The next open() reconfigures the stopped port
// and reuses its mempool (kept per port for the life of the process). One source per port at a
// time: a second open of a busy port is refused (two readers would split the frames).
//
// Timestamps. net_pcap (DPDK 22.11, drivers/net/pcap/pcap_ethdev.c) registers the mbuf rx
// timestamp dynamic field at probe and writes every frame's pcap header time into it, in
// microseconds since the Unix epoch: header->ts.tv_sec * 1e6 + tv_usec from a handle opened with
// pcap_open_offline (or pcap_open_live for rx_iface), i.e. libpcap's default microsecond
// precision. A replay therefore gives the file's own timestamps, exactly for a microsecond pcap;
// a nanosecond pcap or pcapng comes back truncated to the microsecond, because libpcap scales it
// down before net_pcap sees it. Other drivers define no unit for that field (a NIC's raw clock,
// another time base), so their frames are stamped with rocehil::wall_clock_ns() once per burst.
//
// Lengths. caplen = min(pkt_len, snaplen), wire_len = pkt_len. A frame longer than its first
// segment (net_pcap splits records over 2 KB across mbufs) is gathered up to the snap length
// into a buffer made at open (burst x snaplen), so long frames are not cut at 2 KB. Known PMD
// limits: net_pcap sets pkt_len to the record's captured length, so a file recorded with a snap
// length replays with wire_len = that captured length (its original length is lost);
// net_af_packet copies at most framesz (default 2048) minus its 66-byte header per frame and
// reports that as pkt_len: give it framesz=10240,blocksz=20480 for jumbo frames, and a ring of
// framecnt=8192 or more (its default of 512 frames overflowed at 190 kframes/s on a veth here).
// A driver that offers scatter (a NIC) is configured for a 9600-byte MTU so a RoCE mirror's 4 KB
// MTU frames are received, not dropped as oversized.
//
// End of a replay. net_pcap with rx_pcap (and without infinite_rx) gives no end-of-file signal:
// once the file is read, rx_burst returns 0 forever. Such a port ends (next_batch returns 0)
// after it has returned nothing for 100 ms of continuous polling: more than any stall of a read
// from a regular file. Every other port ends only on stop().
//
// Counters are deltas from open(): captured = frames delivered; dropped_buffer = imissed +
// rx_nombuf; dropped_interface = ierrors (stats reset at start where the driver can, a baseline
// subtracted where it cannot). net_af_packet in DPDK 22.11 reports no drops at all, although its
// kernel ring overflows like any other: its sockets' PACKET_STATISTICS drops are added to
// dropped_buffer (as DPDK 25.03's driver does itself; a drop is reported to whichever reads the
// socket first, so the sum stays exact with a newer DPDK too).
//
// Queues. With DpdkSourceOptions::queues = N the port is configured with N receive queues, one
// source each, and the frames of a flow must all reach one queue: a NIC (mlx5 and the like)
// spreads them by RSS on the outer IP addresses and UDP ports (rss_hf IP | UDP, the driver's
// default key); net_af_packet with qpairs=N has one socket per queue in a PACKET_FANOUT_HASH group
// (drivers/net/af_packet/rte_eth_af_packet.c opens them in queue order), and the kernel's flow
// hash does the spreading, so its qpairs must equal N. net_pcap cannot spread a replay. The port
// is shared by its queues' sources and stopped when the last of them ends. Its counters are the
// port's, not a queue's (imissed, rx_nombuf, ierrors), and are reported by queue 0's source, so
// the sources' counters add up to the port's; net_af_packet's kernel drops are each queue's own
// socket's. That driver also sets PACKET_FANOUT_FLAG_ROLLOVER: a frame whose socket's ring is
// nearly full goes to another queue's, splitting its flow over two workers; the sockets'
// PACKET_ROLLOVER_STATISTICS count those frames (CaptureCounters::moved) so the split is reported.
//
// stop() sets an atomic flag (safe from another thread or a signal handler). The next_batch in
// progress then drains what the port already holds, at most rx_descriptors more frames (an
// endless source such as net_null would never run dry), and returns 0.

namespace rocehil::capture {

namespace {

using namespace dpdk;

// A replayed file has ended when its port returned nothing for this long.
constexpr std::int64_t replay_idle_end_ns = 100'000'000;
// Empty polls spent busy-waiting (rte_pause) before sleeping between polls: some 100 us of
// spinning, so a burst that starts right after a short lull is met at once, while an idle port
// costs little CPU (a 5 us sleep, 55 us with the default timer slack, between polls; the ring
// holds thousands of frames, far more than arrive in 55 us of a RoCE mirror's traffic).
constexpr unsigned spin_polls = 2000;
constexpr auto idle_sleep = std::chrono::microseconds(5);
// With a port reused, frames a live device (af_packet's kernel ring) kept while stopped are
// discarded before the capture starts, at most this many.
constexpr unsigned stale_flush_limit = 1u << 20;
constexpr std::uint32_t jumbo_mtu = 9600;
constexpr std::uint16_t tx_descriptors = 512;
// Receive queues one port may be read through (workers).
constexpr std::uint16_t max_queues = 256;

// Gives the port back (stopped, if it was started) when open() fails after claiming it.
struct PortClaim {
  Eal& e;
  std::uint16_t port;
  bool started = false;
  bool keep = false;
  ~PortClaim() {
    if (keep) return;
    if (started) rte_eth_dev_stop(port);
    e.ports[port].in_use = false;
  }
};

// A started port, shared by the sources of its queues: the last one to end stops it and gives
// it back.
struct StartedPort {
  std::uint16_t port = 0;
  rte_eth_stats baseline{};
  StartedPort() = default;
  StartedPort(const StartedPort&) = delete;
  StartedPort& operator=(const StartedPort&) = delete;
  ~StartedPort() {
    rte_eth_dev_stop(port);
    Eal& e = eal();
    std::lock_guard lock(e.mutex);
    e.ports[port].in_use = false;
  }
};

class DpdkPortSource final : public DpdkSource {
 public:
  struct Setup {
    std::shared_ptr<const StartedPort> port;
    std::uint16_t queue = 0;
    bool port_counters = false;  // this source reports the port's own counters (queue 0)
    InterfaceInfo info;
    std::uint32_t snaplen = 0;
    std::uint16_t burst = 0;
    std::uint32_t drain_budget = 0;
    bool replay = false;
    int ts_offset = -1;  // the rx timestamp dynamic field, when its unit is known
    std::uint64_t ts_flag = 0;
    // net_af_packet's sockets behind this queue, read for the kernel's ring drops and moves.
    std::vector<int> packet_sockets;
    std::vector<std::uint64_t> moved_baseline;  // their rollover counts at open
  };

  explicit DpdkPortSource(Setup setup)
      : s_(std::move(setup)),
        kept_(s_.burst, nullptr),
        // Not zeroed: pages a short-frame capture never gathers into are never touched.
        gather_(std::make_unique_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(s_.burst) *
                                                               s_.snaplen)) {}

  ~DpdkPortSource() override { release(); }

  DpdkPortSource(const DpdkPortSource&) = delete;
  DpdkPortSource& operator=(const DpdkPortSource&) = delete;

  std::size_t next_batch(std::span<Frame> out) noexcept override {
    release();
    if (finished_ || out.empty()) return 0;
    const auto want = static_cast<std::uint16_t>(std::min<std::size_t>(out.size(), s_.burst));
    unsigned idle_polls = 0;
    std::int64_t idle_since = 0;
    for (;;) {
      if (!draining_ && stopping_.load(std::memory_order_acquire)) {
        draining_ = true;
        drain_left_ = s_.drain_budget;
      }
      const std::uint16_t ask =
          draining_ ? static_cast<std::uint16_t>(std::min<std::uint32_t>(want, drain_left_)) : want;
      const std::uint16_t n =
          ask == 0 ? 0 : rte_eth_rx_burst(s_.port->port, s_.queue, kept_.data(), ask);
      if (n > 0) {
        kept_count_ = n;
        fill(out.first(n));
        captured_.fetch_add(n, std::memory_order_relaxed);
        if (draining_) drain_left_ -= n;
        return n;
      }
      if (draining_) break;
      if (s_.replay) {
        const std::int64_t now = monotonic_ns();
        if (idle_since == 0)
          idle_since = now;
        else if (now - idle_since >= replay_idle_end_ns)
          break;
      }
      if (idle_polls < spin_polls) {
        ++idle_polls;
        rte_pause();
      } else {
        std::this_thread::sleep_for(idle_sleep);
      }
    }
    finished_ = true;
    return 0;
  }

  void stop() noexcept override { stopping_.store(true, std::memory_order_release); }

  CaptureCounters counters() override {
    CaptureCounters c;
    c.captured = captured_.load(std::memory_order_relaxed);
    const auto since = [](std::uint64_t v, std::uint64_t base) { return v >= base ? v - base : 0; };
    {
      std::lock_guard lock(kernel_drops_mutex_);
      for (const int fd : s_.packet_sockets) kernel_drops_ += take_packet_drops(fd);
      c.dropped_buffer = kernel_drops_;
    }
    for (std::size_t i = 0; i < s_.packet_sockets.size(); ++i)
      if (const auto moved = packet_rollovers(s_.packet_sockets[i]))
        c.moved += since(*moved, s_.moved_baseline[i]);
    rte_eth_stats now{};
    if (s_.port_counters && rte_eth_stats_get(s_.port->port, &now) == 0) {
      const rte_eth_stats& base = s_.port->baseline;
      c.dropped_buffer += since(now.imissed, base.imissed) + since(now.rx_nombuf, base.rx_nombuf);
      c.dropped_interface = since(now.ierrors, base.ierrors);
    }
    return c;
  }

  const InterfaceInfo& interface_info() const noexcept override { return s_.info; }
  bool replays_a_file() const noexcept override { return s_.replay; }

 private:
  void release() noexcept {
    if (kept_count_ == 0) return;
    rte_pktmbuf_free_bulk(kept_.data(), kept_count_);
    kept_count_ = 0;
  }

  void fill(std::span<Frame> out) noexcept {
    std::uint64_t burst_ns = 0;  // read once per burst, and only when a frame needs it
    for (std::size_t i = 0; i < out.size(); ++i) {
      rte_mbuf* m = kept_[i];
      Frame& f = out[i];
      const std::uint32_t wire_len = m->pkt_len;
      std::uint32_t caplen = std::min(wire_len, s_.snaplen);
      const auto* data = rte_pktmbuf_mtod(m, const std::uint8_t*);
      if (m->data_len < caplen) {
        // The frame continues in further segments: gather it up to the snap length.
        const void* whole = rte_pktmbuf_read(m, 0, caplen, gather_.get() + i * s_.snaplen);
        if (whole != nullptr)
          data = static_cast<const std::uint8_t*>(whole);
        else
          caplen = m->data_len;
      }
      if (s_.ts_offset >= 0 && (m->ol_flags & s_.ts_flag) != 0) {
        rte_mbuf_timestamp_t us = 0;
        std::memcpy(&us, reinterpret_cast<const std::uint8_t*>(m) + s_.ts_offset, sizeof(us));
        f.ts_ns = us * 1000;
      } else {
        if (burst_ns == 0) burst_ns = static_cast<std::uint64_t>(wall_clock_ns());
        f.ts_ns = burst_ns;
      }
      f.caplen = caplen;
      f.wire_len = wire_len;
      f.link_type = link_type::ethernet;
      f.data = data;
    }
  }

  Setup s_;
  std::vector<rte_mbuf*> kept_;  // the mbufs behind the frames last returned
  std::uint16_t kept_count_ = 0;
  std::unique_ptr<std::uint8_t[]> gather_;  // burst x snaplen, for frames in several segments
  std::atomic<bool> stopping_{false};
  bool draining_ = false;
  std::uint32_t drain_left_ = 0;
  bool finished_ = false;
  std::atomic<std::uint64_t> captured_{0};
  std::mutex kernel_drops_mutex_;
  std::uint64_t kernel_drops_ = 0;  // summed over reads of the packet sockets' statistics
};

// Why the port cannot give `queues` workers a flow each, or nothing. net_af_packet spreads by
// its sockets' fanout (qpairs); another driver by RSS, which it must offer for IP or UDP.
std::string queue_problem(const std::string& name, const std::string& driver,
                          const std::vector<std::pair<std::string, std::string>>& kv,
                          const rte_eth_dev_info& dev, std::uint16_t queues) {
  if (driver == "net_af_packet") {
    const std::uint64_t qpairs = kv_number(kv, "qpairs", 1);
    if (qpairs == queues) return {};
    if (queues == 1)
      return fmt::format(
          "--iface {}: qpairs={} spreads the frames over several queues and one worker reads "
          "one; use qpairs=1, or --workers {}",
          name, kv_value(kv, "qpairs"), qpairs);
    return fmt::format(
        "--workers {}: the device {} has qpairs={}; give it qpairs={} (one queue per worker, the "
        "kernel's fanout hash keeps a flow on one)",
        queues, name, qpairs, queues);
  }
  if (driver == "net_pcap") {
    if (kv_count(kv, "rx_pcap") + kv_count(kv, "rx_iface") + kv_count(kv, "rx_iface_in") > 1)
      return fmt::format(
          "--iface {}: the device has several receive queues (rx_pcap/rx_iface given more than "
          "once) and rocehil reads one; give one source per device",
          name);
    if (queues > 1)
      return fmt::format(
          "--workers {}: net_pcap delivers one file or interface on one queue and cannot spread "
          "it by flow; use --workers 1 (for a file, 'rocehil analyze --workers {}' reads it in "
          "parallel)",
          queues, queues);
    return {};
  }
  if (queues == 1) return {};
  if (dev.max_rx_queues < queues)
    return fmt::format("--workers {}: the DPDK port {} ({}) has at most {} receive queues", queues,
                       name, driver, dev.max_rx_queues);
  if ((dev.flow_type_rss_offloads & (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) == 0)
    return fmt::format(
        "--workers {}: the DPDK port {} ({}) cannot spread frames by flow (no RSS on IP "
        "addresses or UDP ports); use --workers 1",
        queues, name, driver);
  return {};
}

}  // namespace

std::vector<std::unique_ptr<DpdkSource>> dpdk::open_port_sources(const DpdkSourceOptions& options) {
  if (options.snaplen < 64 || options.snaplen > 262144)
    throw input_error(fmt::format(
        "--snaplen {}: must be 64-262144 bytes (128 keeps every RoCE header)", options.snaplen));
  if (options.burst == 0 || options.burst > 1024)
    throw input_error(fmt::format("dpdk burst {}: must be 1-1024 frames", options.burst));
  if (options.rx_descriptors == 0)
    throw input_error("dpdk rx_descriptors 0: give the receive ring a size (4096 is usual)");
  if (options.queues == 0 || options.queues > max_queues)
    throw input_error(fmt::format("--workers {}: must be 1-{} (one DPDK receive queue each)",
                                  options.queues, max_queues));
  const std::uint16_t queues = options.queues;

  Eal& e = eal();
  std::unique_lock lock(e.mutex);
  init_eal_locked(e, options.eal_args);
  const std::uint16_t port = find_port(options.port);
  char name_buf[RTE_ETH_NAME_MAX_LEN] = {};
  rte_eth_dev_get_name_by_port(port, name_buf);
  const std::string name = name_buf;

  PortSlot& slot = e.ports[port];
  if (slot.in_use)
    throw input_error(fmt::format(
        "--iface {}: this process already captures on that DPDK port; stop that capture first "
        "(two readers of one port would each see part of the frames)",
        name));
  slot.in_use = true;
  PortClaim claim{.e = e, .port = port, .started = false, .keep = false};

  rte_eth_dev_info dev{};
  if (const int rc = rte_eth_dev_info_get(port, &dev); rc != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot query the DPDK port: {}", name, dpdk_error(rc)),
                -rc);
  const std::string driver = dev.driver_name != nullptr ? dev.driver_name : "";
  std::string devargs;
  bool is_vdev = false;
  if (dev.device != nullptr) {
    if (const rte_devargs* da = rte_dev_devargs(dev.device); da != nullptr && da->args != nullptr)
      devargs = da->args;
    if (const rte_bus* bus = rte_dev_bus(dev.device); bus != nullptr)
      is_vdev = std::string_view(rte_bus_name(bus)) == "vdev";
  }
  const auto kv = device_kvargs(devargs);

  // Every receive queue the port has is read, one per source: frames spread to a queue nobody
  // read would be lost without a count.
  if (const std::string problem = queue_problem(name, driver, kv, dev, queues); !problem.empty())
    throw input_error(problem);
  const bool replay =
      driver == "net_pcap" && kv_count(kv, "rx_pcap") == 1 && kv_number(kv, "infinite_rx", 0) == 0;

  // Buffers: DPDK's default 2 KB data room, more when the driver copies whole frames into one
  // mbuf (af_packet copies up to framesz bytes with no bounds check) or asks for more.
  std::uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
  if (driver == "net_af_packet")
    room = std::max<std::uint32_t>(room, static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                             kv_number(kv, "framesz", 2048), 65535)) +
                                             RTE_PKTMBUF_HEADROOM);
  room = std::max<std::uint32_t>(room, dev.min_rx_bufsize + RTE_PKTMBUF_HEADROOM);
  const auto data_room = static_cast<std::uint16_t>(std::min<std::uint32_t>(room, 65535));

  // Configure: the receive queues, one TX queue where the driver has any (some refuse zero),
  // RSS on the outer IP/UDP header for several queues (net_af_packet's kernel fanout spreads its
  // own), and a jumbo MTU with scatter where the driver offers scatter; without that offer the
  // driver's default stays (virtual devices take any length anyway).
  const std::uint16_t nb_tx = dev.max_tx_queues > 0 ? 1 : 0;
  rte_eth_conf spread{};
  if (queues > 1 && driver != "net_af_packet") {
    spread.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    spread.rx_adv_conf.rss_conf.rss_hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) & dev.flow_type_rss_offloads;
  }
  rte_eth_conf conf = spread;
  if ((dev.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
    conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
    conf.rxmode.mtu = std::min<std::uint32_t>(dev.max_mtu, jumbo_mtu);
  }
  int rc = rte_eth_dev_configure(port, queues, nb_tx, &conf);
  if (rc != 0 && conf.rxmode.offloads != 0) {
    conf = spread;
    rc = rte_eth_dev_configure(port, queues, nb_tx, &conf);
  }
  if (rc != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot configure the DPDK port ({}) with {} receive "
                            "queue(s): {}",
                            name, driver, queues, dpdk_error(rc)),
                -rc);
  std::uint16_t nb_rxd = options.rx_descriptors;
  std::uint16_t nb_txd = tx_descriptors;
  if (rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd); rc != 0)
    throw Error(
        ExitCode::infrastructure,
        fmt::format("--iface {}: cannot size the DPDK port's rings: {}", name, dpdk_error(rc)),
        -rc);

  const unsigned cache = options.mbufs >= 4096 ? 256 : 0;
  const std::uint64_t needed = std::uint64_t{nb_rxd} + options.burst + cache + 64;
  if (options.mbufs < needed)
    throw input_error(fmt::format(
        "dpdk mbufs {}: too few for {} receive descriptors and bursts of {}: give at least {}",
        options.mbufs, nb_rxd, options.burst, needed));
  const std::uint64_t pool_mbufs = std::uint64_t{options.mbufs} * queues;
  if (pool_mbufs > std::numeric_limits<std::uint32_t>::max())
    throw input_error(
        fmt::format("dpdk mbufs {} x {} queues: too many for one pool", options.mbufs, queues));

  const int socket = rte_eth_dev_socket_id(port);
  rte_mempool* old_pool = nullptr;
  if (slot.pool == nullptr || slot.pool_mbufs != pool_mbufs || slot.pool_room != data_room) {
    const std::string pool_name = fmt::format("rocehil{}_{}", port, ++e.pool_generation);
    rte_mempool* pool = rte_pktmbuf_pool_create(
        pool_name.c_str(), static_cast<unsigned>(pool_mbufs), cache, 0, data_room, socket);
    if (pool == nullptr) {
      const int err = rte_errno;
      const std::uint64_t mib = (pool_mbufs * (data_room + sizeof(rte_mbuf) + 64)) >> 20;
      throw Error(ExitCode::infrastructure,
                  fmt::format("--iface {}: cannot allocate {} packet buffers of {} bytes (about "
                              "{} MiB): {}; give the EAL more memory (-m 512 with --no-huge, "
                              "or more hugepages) or use fewer buffers or workers",
                              name, pool_mbufs, data_room, mib, rte_strerror(err)),
                  err);
    }
    old_pool = slot.pool;
    slot.pool = pool;
    slot.pool_mbufs = static_cast<std::uint32_t>(pool_mbufs);
    slot.pool_room = data_room;
  }

  rte_eth_rxconf rxconf = dev.default_rxconf;
  rxconf.offloads = conf.rxmode.offloads;
  for (std::uint16_t q = 0; q < queues; ++q)
    if (rc = rte_eth_rx_queue_setup(port, q, nb_rxd, static_cast<unsigned>(socket), &rxconf,
                                    slot.pool);
        rc != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("--iface {}: cannot set up the DPDK receive queue {} ({} "
                              "descriptors): {}",
                              name, q, nb_rxd, dpdk_error(rc)),
                  -rc);
  // The queues set up again released the old one's buffers: the old pool is unused now.
  if (old_pool != nullptr) rte_mempool_free(old_pool);
  if (nb_tx > 0) {
    if (rc = rte_eth_tx_queue_setup(port, 0, nb_txd, static_cast<unsigned>(socket), nullptr);
        rc != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("--iface {}: cannot set up the DPDK transmit queue: {}", name,
                              dpdk_error(rc)),
                  -rc);
  }
  // A mirror port carries other hosts' frames. Virtual devices such as net_pcap have no such
  // mode (-ENOTSUP): nothing is lost by going on without it.
  rc = rte_eth_promiscuous_enable(port);
  if (rc != 0 && rc != -ENOTSUP)
    throw Error(
        ExitCode::infrastructure,
        fmt::format("--iface {}: cannot turn promiscuous mode on: {}", name, dpdk_error(rc)), -rc);
  if (rc = rte_eth_dev_start(port); rc != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot start the DPDK port: {}", name, dpdk_error(rc)),
                -rc);
  claim.started = true;

  if (slot.used_before && !replay) {
    // A live device may have kept frames while stopped (af_packet's ring goes on filling):
    // they belong to no capture.
    std::array<rte_mbuf*, 64> junk{};
    for (std::uint16_t q = 0; q < queues; ++q)
      for (unsigned flushed = 0; flushed < stale_flush_limit;) {
        const std::uint16_t n = rte_eth_rx_burst(port, q, junk.data(), junk.size());
        if (n == 0) break;
        rte_pktmbuf_free_bulk(junk.data(), n);
        flushed += n;
      }
  }

  DpdkPortSource::Setup common;
  common.snaplen = options.snaplen;
  common.burst = options.burst;
  common.drain_budget = std::max<std::uint32_t>(nb_rxd, options.burst);
  common.replay = replay;
  // Only net_pcap's unit is known (microseconds since the epoch, see above).
  if (driver == "net_pcap") {
    const int offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, nullptr);
    const int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, nullptr);
    if (offset >= 0 && bit >= 0) {
      common.ts_offset = offset;
      common.ts_flag = std::uint64_t{1} << bit;
    }
  }
  common.info.name = name;
  common.info.description = "dpdk " + driver;
  // Virtual devices report a made-up link (10G for net_pcap, net_af_packet, net_null), and the
  // speed converts pause quanta to time: report what is known, else 0 (unknown).
  if (driver == "net_af_packet") {
    common.info.speed_bps = interface_speed_bps(kv_value(kv, "iface"));
  } else if (!is_vdev) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP &&
        link.link_speed != RTE_ETH_SPEED_NUM_NONE && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
      common.info.speed_bps = std::uint64_t{link.link_speed} * 1'000'000;
  }

  // Counters are deltas from here: reset where the driver can, and subtract a baseline where it
  // cannot.
  rte_eth_stats baseline{};
  rte_eth_stats_reset(port);
  rte_eth_stats_get(port, &baseline);
  std::vector<DpdkPortSource::Setup> setups(queues, common);
  if (driver == "net_af_packet") {
    // The driver opened queue q's socket q-th, so they appear in that order (ascending fds);
    // should their number not match the queues', all go to queue 0: the sum stays exact.
    std::vector<int> mine;
    for (const auto& [fd, ifindex] : e.packet_sockets)
      if (ifindex > 0 && static_cast<std::uint32_t>(ifindex) == dev.if_index) mine.push_back(fd);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      drop_outgoing(mine[i]);
      take_packet_drops(mine[i]);  // from now on
      DpdkPortSource::Setup& to = setups[mine.size() == queues ? i : 0];
      to.packet_sockets.push_back(mine[i]);
      to.moved_baseline.push_back(packet_rollovers(mine[i]).value_or(0));
    }
  }
  slot.used_before = true;
  claim.keep = true;
  lock.unlock();
  // From here the port is stopped and given back when the last of its queues' sources ends.
  auto started = std::make_shared<StartedPort>();
  started->port = port;
  started->baseline = baseline;

  std::vector<std::unique_ptr<DpdkSource>> sources;
  for (std::uint16_t q = 0; q < queues; ++q) {
    DpdkPortSource::Setup& s = setups[q];
    s.port = started;
    s.queue = q;
    s.port_counters = q == 0;
    sources.push_back(std::make_unique<DpdkPortSource>(std::move(s)));
  }
  return sources;
}

}  // namespace rocehil::capture
