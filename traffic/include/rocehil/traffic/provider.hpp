#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/traffic/soft_settings.hpp"

namespace rocehil::traffic {

// The one interface where hardware enters the traffic engine (design: "Interfaces where hardware
// enters"). Two implementations, chosen by name at run time: `verbs` (libibverbs on a real RNIC)
// and `soft` (RoCEv2 in user space over UDP sockets). Workloads and the collective executor are
// written once against it.
//
// Threading: a Provider and everything it created are used from one thread. Hot-path calls
// (post_send, post_recv, poll) allocate nothing and never throw; they return a status instead.
// Setup calls throw rocehil::Error with errno and context.

enum class Opcode : std::uint8_t { send, send_with_imm, write, write_with_imm, read, recv };
std::string_view to_string(Opcode op);

enum class QpType : std::uint8_t { rc, ud };

enum class WcStatus : std::uint8_t {
  success,
  local_length_error,      // a receive buffer too small for the message
  local_protection_error,  // a local buffer outside its memory region
  remote_access_error,     // the responder NAKed: bad R_Key or outside the remote region
  remote_invalid_request,  // the responder NAKed: e.g. a SEND with no receive posted
  retry_exceeded,          // no ACK after the retry limit (transport retries exhausted)
  flushed,                 // the QP went to the error state with this request outstanding
  rnr_retry_exceeded,      // the responder kept answering "no receive posted" (RNR NAK)
};
std::string_view to_string(WcStatus status);
// The status whose to_string is `name`, or nothing.
std::optional<WcStatus> wc_status_from_name(std::string_view name);

// Whether a failed completion is the fabric's doing, wherever it happens (bw, lat, a collective,
// an incast): its requests or their acknowledgements did not get through the network before the
// transport gave up (retry_exceeded). Every other failure points at an end of the connection or
// at what drove it: a buffer or key the host got wrong, a responder that refused or had no
// receive posted (an RNR NAK crossed the fabric, so the fabric worked), a flush (its QP had
// already failed for another reason). The one rule every workload's grading takes.
bool caused_by_fabric(WcStatus status);

// How a region's memory was registered with the NIC.
enum class RegionKind : std::uint8_t {
  host,             // host memory (ibv_reg_mr, or the soft provider's own)
  gpu_dmabuf,       // GPU memory exported as a dma-buf (ibv_reg_dmabuf_mr)
  gpu_peer_memory,  // GPU memory pinned through nvidia-peermem (ibv_reg_mr of the device pointer)
};
// "host", "dma-buf", "peer memory".
std::string_view to_string(RegionKind kind);

// Memory the provider can read, write and expose to peers.
struct MemoryRegion {
  std::byte* data = nullptr;  // host address (GPU memory: nullptr, use the device pointer)
  std::uint64_t length = 0;
  std::uint64_t remote_address = 0;  // what a peer puts in a RETH
  std::uint32_t lkey = 0;
  std::uint32_t rkey = 0;
  RegionKind kind = RegionKind::host;
};

// What a peer needs to reach a QP, exchanged out of band (the agent protocol carries it).
struct Endpoint {
  std::string address;          // the NIC's IP address (IPv4 or IPv6 text)
  std::string gid;              // verbs: the GID as 32 hex digits; soft: empty
  std::uint32_t qpn = 0;        // 24 bits
  std::uint32_t psn = 0;        // 24 bits, the first PSN this QP sends
  std::uint16_t udp_sport = 0;  // the QP's RoCEv2 UDP source port; 0: chosen by the NIC
  std::uint32_t mtu = 1024;     // path MTU in bytes: 256, 512, 1024, 2048 or 4096
  // RDMA READs the QP serves at once as the responder (verbs: its max_dest_rd_atomic); the
  // peer keeps its READs in flight within it. 0: not said (soft, which does not limit them).
  std::uint8_t max_reads = 0;
};

struct QpOptions {
  QpType type = QpType::rc;
  std::uint32_t max_send_wr = 128;  // TX depth
  std::uint32_t max_recv_wr = 128;
  std::uint32_t mtu = 1024;
  std::uint32_t max_inline = 0;
  std::uint8_t traffic_class = 0;  // the IP TOS / traffic class byte: DSCP << 2 | ECN
  // The service level (ibv_ah_attr.sl): on RoCE the VLAN priority (PCP) of the packets, for a
  // fabric whose switches trust PCP rather than DSCP. The soft provider sends untagged UDP and
  // refuses any but 0.
  std::uint8_t sl = 0;
  std::uint16_t udp_sport = 0;   // 0: the provider picks (soft: an ephemeral port)
  std::uint8_t retry_count = 7;  // transport retries before retry_exceeded, as ibv's retry_cnt
  // Time without progress before go-back-N. The default is what ibv timeout 14 means (4.096 us
  // x 2^14), perftest's default: shorter fires on a busy host whose responder is descheduled.
  std::uint32_t ack_timeout_us = 67108;
};

struct SendRequest {
  std::uint64_t wr_id = 0;
  Opcode opcode = Opcode::write;
  const MemoryRegion* local = nullptr;
  std::uint64_t local_offset = 0;
  std::uint32_t length = 0;
  std::uint64_t remote_address = 0;  // WRITE, READ
  std::uint32_t rkey = 0;            // WRITE, READ
  std::uint32_t imm = 0;             // *_with_imm, host order
  bool signaled = true;              // a completion is reported when it finishes
};

struct RecvRequest {
  std::uint64_t wr_id = 0;
  const MemoryRegion* local = nullptr;
  std::uint64_t local_offset = 0;
  std::uint32_t length = 0;
};

struct Completion {
  std::uint64_t wr_id = 0;
  WcStatus status = WcStatus::success;
  Opcode opcode = Opcode::send;  // recv for receive completions
  std::uint32_t qpn = 0;
  std::uint32_t byte_len = 0;  // receive completions: bytes placed
  bool has_imm = false;
  std::uint32_t imm = 0;
  // A failed request in the NIC's own words (verbs: ibv_wc_status_str, which returns static
  // text) and its vendor syndrome (ibv_wc.vendor_err); nullptr and 0 where the provider has
  // none (soft, whose status is its own).
  const char* device_status = nullptr;
  std::uint32_t vendor_error = 0;
};
// "QP 0x11: retry_exceeded (the NIC: transport retry counter exceeded, vendor error 0x81)": the
// first error a workload reports. Not for the hot path: it allocates.
std::string describe_failure(const Completion& completion);

// The fields of QpCounters, one bit each in QpCounters::measured.
enum class QpCounter : std::uint8_t {
  packets_sent,
  bytes_sent,
  packets_received,
  bytes_received,
  retransmitted_packets,
  timeouts,
  naks_sent,
  naks_received,
  cnps_sent,
  cnps_handled,
  ce_received,
  out_of_sequence,
  rate_cuts,
  rate_gbps,
};
inline constexpr int qp_counter_kinds = 14;
std::string_view to_string(QpCounter counter);  // the field's name: "retransmitted_packets"
std::optional<QpCounter> qp_counter_named(std::string_view name);

// Counters like an RNIC's, per QP. A provider counts only what it can see: `soft` is the
// transport and counts everything; `verbs` sees completions, not packets, so it measures the
// payload bytes and nothing else (the NIC counts the rest per port, not per QP). A field whose
// bit is clear in `measured` was not counted: it reads 0 but must never be reported as 0.
struct QpCounters {
  static constexpr std::uint32_t all = (1u << qp_counter_kinds) - 1;
  std::uint32_t measured = all;
  bool has(QpCounter c) const { return (measured >> static_cast<int>(c)) & 1u; }
  static constexpr std::uint32_t bit(QpCounter c) { return 1u << static_cast<int>(c); }
  std::uint64_t value(QpCounter c) const;  // rate_gbps truncated; 0 when not measured
  // Sums counts (rates too); the sum measures only what both did.
  QpCounters& operator+=(const QpCounters& more);

  std::uint64_t packets_sent = 0, bytes_sent = 0;  // bytes: RoCEv2 UDP payload (BTH .. ICRC)
  std::uint64_t packets_received = 0, bytes_received = 0;
  std::uint64_t retransmitted_packets = 0;  // request packets sent again (go-back-N)
  std::uint64_t timeouts = 0;               // ACK timeouts that triggered a retransmission
  std::uint64_t naks_sent = 0, naks_received = 0;
  std::uint64_t cnps_sent = 0, cnps_handled = 0;
  std::uint64_t ce_received = 0;      // packets that arrived with ECN CE
  std::uint64_t out_of_sequence = 0;  // request packets dropped by the responder (PSN ahead)
  std::uint64_t rate_cuts = 0;        // DCQCN rate decreases (soft; RNICs do not count per QP)
  double rate_gbps = 0;               // the DCQCN current rate; 0 when not rate-limited
};

// The most completions one CQ holds on ConnectX-4 to -7 (ibv_devinfo -v: max_cqe 4194303). Both
// providers refuse a deeper CQ, so a suite that would overrun the NIC's fails on the testbed too.
inline constexpr std::uint32_t max_cq_depth = 4194303;

enum class PostResult : std::uint8_t { ok, queue_full, invalid, not_connected };

class QueuePair {
 public:
  virtual ~QueuePair() = default;
  virtual std::uint32_t qpn() const = 0;
  virtual Endpoint local_endpoint() const = 0;
  // RC: moves the QP to ready-to-send toward `remote`. Throws rocehil::Error on failure.
  virtual void connect(const Endpoint& remote) = 0;
  virtual PostResult post_send(std::span<const SendRequest> requests) = 0;
  virtual PostResult post_recv(std::span<const RecvRequest> requests) = 0;
  virtual QpCounters counters() const = 0;
  // Asks the NIC to send this QP's requests at most `bits_per_s` (packet pacing; 0 lifts the
  // limit), once connected. Returns empty when the NIC took it, else one line saying why not
  // (no limiter on the device, a rate outside its range), and the caller paces in software
  // instead (pacing.hpp). Setup path: may allocate, never throws. The default has no limiter.
  virtual std::string limit_rate(double bits_per_s);
};

// A completion queue; a provider's QPs report to the CQ they were created with.
class CompletionQueue {
 public:
  virtual ~CompletionQueue() = default;
  // Fills `out` with up to out.size() completions; returns how many. Never blocks. On `soft` it
  // also drives the protocol (receives, ACKs, retransmission timers) of the QPs on this CQ.
  virtual std::size_t poll(std::span<Completion> out) = 0;
  // Called when polls keep finding nothing: gives the CPU away for at most `at_most`. On `soft`
  // it sleeps until a packet arrives or a QP's timer is due, and not at all while a QP has
  // something to send: ranks that wait for their peers then leave the CPU to the peers (the
  // testbed runs hundreds of ranks on a few cores, where spinning ones starve the rest past
  // their ACK timeouts). An RNIC moves data without the CPU: verbs only yields. Returns
  // whether it waited for work (soft), false when it only yielded (verbs).
  virtual bool wait_for_work(std::chrono::microseconds at_most);
  // What broke the CQ itself (verbs: ibv_poll_cq returned a negative value, an overrun or a
  // device error only a new CQ would clear), naming the device, the CQ and the value; empty while
  // nothing did. A workload that polls nothing checks it and ends at once with it as its error,
  // rather than waiting out its silence timeout.
  virtual const std::string& failure() const noexcept;
};

// Something a device reported on its own, outside any completion: verbs reads them with
// ibv_get_async_event for the provider's whole life, the soft provider from its netdev's carrier.
struct DeviceEvent {
  std::int64_t at_ns = 0;  // when it was seen (wall clock, Unix ns)
  std::string device;      // mlx5_0; soft: the netdev its address is on
  // port_active, port_error, qp_fatal, qp_request_error, qp_access_error, cq_error,
  // srq_error, gid_change, device_fatal, or another libibverbs event by its own short name.
  std::string kind;
  std::string detail;  // "port 1", "QP 0x1a2b", "carrier lost", ...
  bool operator==(const DeviceEvent&) const = default;
};
// The most events a provider keeps between two take_events(); more are counted, not kept.
inline constexpr std::size_t max_device_events = 64;

struct DeviceInfo {
  std::string name;                    // mlx5_0, or "soft"
  std::string provider;                // verbs | soft
  std::vector<std::string> addresses;  // IPs a QP can use
  std::string detail;                  // firmware, port state, ...
};

// DSCP d to priority d >> 3: what a ConnectX with trust dscp and SONiC use unless told.
constexpr std::array<std::uint8_t, 64> default_dscp_to_priority() {
  std::array<std::uint8_t, 64> map{};
  for (std::size_t d = 0; d < map.size(); ++d) map[d] = static_cast<std::uint8_t>(d >> 3);
  return map;
}

struct ProviderOptions {
  std::string device;  // verbs: RDMA device name (mlx5_0); soft: ignored
  std::uint8_t port = 1;
  int gid_index = -1;   // verbs: -1 picks the RoCEv2 GID carrying `address`
  std::string address;  // the local IP traffic uses (soft: the address sockets bind)
  // soft: its DCQCN, CNP interval and CNP DSCP by ConnectX's names (soft_settings.hpp); a name
  // not given keeps the provider's default. verbs: must be empty, a NIC's are in its own files.
  std::vector<SoftSetting> soft_settings;
  // soft: the speed of the port `address` is on, in Gb/s (the inventory's link_gbps). It is the
  // DCQCN line rate, and the rate the provider paces all its QPs' requests to together, as a NIC
  // never sends faster than its port: without it a QP's window leaves at CPU speed and overflows
  // the first shaped queue it meets. 0: not known; QPs start at 100 Gb/s and only CNPs slow
  // them. verbs: ignored, the NIC knows its port.
  double port_gbps = 0;
  // soft: the priority of each QP's packets, which decides the PFC frames that pause it, as a
  // ConnectX's trust mode decides it. Trust DSCP (the default): the QP's DSCP (traffic_class >>
  // 2) through dscp_to_priority, DSCP >> 3 unless set (ConnectX's and SONiC's default map).
  // Trust PCP: the QP's sl, always 0 here, since soft sends untagged. verbs: ignored, the NIC
  // has its own (mlnx_qos). The agent passes the host's `trust` setting (the soft provider's
  // file); the DSCP map has no setting yet and stays the default.
  bool trust_pcp = false;
  std::array<std::uint8_t, 64> dscp_to_priority = default_dscp_to_priority();
  // soft: the priorities whose PFC frames pause its QPs, bit P for priority P: the host's `pfc`
  // setting (`mlnx_qos --pfc` on a ConnectX, whose firmware ships none). All by default, a host
  // set up for RoCE; a frame for another priority is counted and ignored. verbs: ignored.
  std::uint8_t pfc_priorities = 0xff;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string_view name() const = 0;
  virtual MemoryRegion register_memory(std::size_t length) = 0;
  // `length` bytes of GPU `gpu`'s memory registered for RDMA: data is null, remote_address the
  // device pointer; fill and read it with write_region and read_region. Only verbs has it: the
  // default throws rocehil::Error (bad input) saying so.
  virtual MemoryRegion register_gpu_memory(int gpu, std::size_t length);
  virtual void deregister_memory(const MemoryRegion& region) = 0;
  // Copies into and out of a region, host or GPU memory (setup and result paths, not the data
  // path). Throws rocehil::Error for a range outside the region.
  virtual void write_region(const MemoryRegion& region, std::uint64_t offset,
                            std::span<const std::byte> bytes);
  virtual void read_region(const MemoryRegion& region, std::uint64_t offset,
                           std::span<std::byte> bytes) const;
  virtual std::unique_ptr<CompletionQueue> create_cq(std::uint32_t depth) = 0;
  virtual std::unique_ptr<QueuePair> create_qp(CompletionQueue& cq, const QpOptions& options) = 0;
  // Why a QP cannot be given its own UDP source port here (QpOptions::udp_sport), or empty when
  // it can: soft binds a socket per port; verbs needs mlx5 direct verbs (a ConnectX), where rxe,
  // for one, derives each QP's port from its number.
  virtual std::string udp_sport_unsupported() const { return {}; }
  // The events the device raised since the last call, oldest first: at most max_device_events,
  // the last of them saying how many more there were. Safe to call from any thread.
  virtual std::vector<DeviceEvent> take_events() { return {}; }
  // Counters the provider's NIC keeps that its netdev does not show, by the names mlx5's
  // `ethtool -S` gives them (soft: rx_prioP_pause, rx_prioP_pause_duration in microseconds and
  // rx_pause_ctrl_phy, the pause frames its NIC obeyed); a run reads them with the netdev's, as
  // ethtool/NAME. A counter the NIC cannot give is absent, never 0. Safe to call from any
  // thread. The default has none.
  virtual std::map<std::string, std::uint64_t> nic_counters() const { return {}; }
  // Does the provider's own work while no workload polls its CQs (its traffic over, or not
  // begun), from the thread that owns it. Soft: passes on what arrived for the host's other
  // providers, which would otherwise wait for it (shared_port.hpp). A NIC works on its own:
  // the default does nothing.
  virtual void serve_idle() {}
  // How often serve_idle wants to run while it is idle; zero: never.
  virtual std::chrono::milliseconds idle_period() const { return std::chrono::milliseconds(0); }
};

// The providers this build has ("soft", and "verbs" when libibverbs was found) and the devices
// they can use here: "soft" with this host's IP addresses, then every RDMA device (none without
// an RNIC). Never throws: a device that cannot be read is listed with the reason in `detail`.
std::vector<std::string> built_providers();
std::vector<DeviceInfo> list_devices();

// "soft" or "verbs". Throws rocehil::Error (bad input) for an unknown name, and (infrastructure)
// naming the reason when the provider cannot open (no RDMA device, verbs not built).
std::unique_ptr<Provider> make_provider(std::string_view name, const ProviderOptions& options);

}  // namespace rocehil::traffic
