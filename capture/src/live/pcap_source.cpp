#include "rocehil/capture/pcap_source.hpp"

#include <linux/if_packet.h>
#include <pcap/pcap.h>
#include <sys/socket.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include "live/interface_speed.hpp"

#include "rocehil/common/error.hpp"

namespace rocehil::capture {

const char* to_string(CaptureFilter filter) noexcept {
  switch (filter) {
    case CaptureFilter::all: return "all";
    case CaptureFilter::roce: return "roce";
    case CaptureFilter::cnp_pfc: return "cnp-pfc";
  }
  return "?";
}

std::optional<CaptureFilter> capture_filter_from(std::string_view name) noexcept {
  for (const CaptureFilter f : {CaptureFilter::all, CaptureFilter::roce, CaptureFilter::cnp_pfc})
    if (name == to_string(f)) return f;
  return std::nullopt;
}

std::string bpf_expression(CaptureFilter filter) {
  // MAC control frames (PFC, PAUSE) are never VLAN tagged. RoCE may carry one or two tags.
  // libpcap's `vlan` shifts the offsets of everything after it in the expression, even across
  // `or`, so the tagged cases nest instead of standing side by side. The BTH opcode (0x81 =
  // CNP) is the byte after the UDP header: udp[8] over IPv4 (libpcap skips IP options), and
  // ip6[48] over IPv6 without extension headers (udp[] is IPv4 only).
  const std::string roce = "udp dst port 4791";
  const std::string cnp =
      "(udp dst port 4791 and ((ip and udp[8] == 0x81) or "
      "(ip6 and ip6[48] == 0x81)))";
  const auto any_tagging = [](const std::string& p) {
    return p + " or (vlan and (" + p + " or (vlan and " + p + ")))";
  };
  switch (filter) {
    case CaptureFilter::all: return "";
    case CaptureFilter::roce: return "ether proto 0x8808 or " + any_tagging(roce);
    case CaptureFilter::cnp_pfc: return "ether proto 0x8808 or " + any_tagging(cnp);
  }
  return "";
}

std::string remote_mirror_bpf_expression() {
  return "ip proto 47 or ip6 proto 47 or (vlan and (ip proto 47 or ip6 proto 47))";
}

namespace {

// Frames handed out per next_batch at most; their bytes are copied into one reused arena,
// because libpcap hands a TPACKET_V3 block back to the kernel when the dispatch call returns.
constexpr std::size_t max_frames_per_dispatch = 256;

std::string pcap_message(pcap_t* handle, int status) {
  if (status == PCAP_ERROR || status == PCAP_WARNING) return pcap_geterr(handle);
  return pcap_statustostr(status);
}

}  // namespace

struct PcapSource::Impl {
  pcap_t* handle = nullptr;
  InterfaceInfo info;
  std::uint32_t snaplen = 0;
  std::chrono::milliseconds block_timeout{100};
  std::vector<std::uint8_t> arena;
  std::atomic<bool> stopping{false};
  // After stop(): frames still in the ring are delivered before next_batch reports the end, so
  // everything the kernel counted as received is either delivered or counted as dropped.
  bool draining = false;
  std::chrono::steady_clock::time_point drain_until;
  bool finished = false;
  std::uint64_t captured = 0;

  // Filled by the dispatch callback.
  Frame* out = nullptr;
  std::size_t filled = 0;

  ~Impl() {
    if (handle != nullptr) pcap_close(handle);
  }

  static void on_frame(u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
    auto* self = reinterpret_cast<Impl*>(user);
    std::uint8_t* copy = self->arena.data() + self->filled * self->snaplen;
    const std::uint32_t caplen = std::min(h->caplen, self->snaplen);
    std::memcpy(copy, bytes, caplen);
    Frame& f = self->out[self->filled++];
    // Nanosecond precision was asked for, so tv_usec holds nanoseconds.
    f.ts_ns = static_cast<std::uint64_t>(h->ts.tv_sec) * 1'000'000'000 +
              static_cast<std::uint64_t>(h->ts.tv_usec);
    f.caplen = caplen;
    f.wire_len = h->len;
    f.link_type = link_type::ethernet;
    f.data = copy;
  }

  std::size_t dispatch(std::span<Frame> frames) {
    out = frames.data();
    filled = 0;
    const int want = static_cast<int>(std::min(frames.size(), max_frames_per_dispatch));
    const int n = pcap_dispatch(handle, want, &Impl::on_frame, reinterpret_cast<u_char*>(this));
    // PCAP_ERROR_BREAK (stop) and errors (the interface went away) both end the capture; the
    // frames delivered before are kept.
    if (n < 0 && n != PCAP_ERROR_BREAK) stopping = true;
    captured += filled;
    return filled;
  }
};

std::unique_ptr<PcapSource> PcapSource::open(const PcapSourceOptions& options) {
  if (options.iface.empty()) throw input_error("--iface: name the interface to capture on");
  if (options.snaplen < 64 || options.snaplen > 262144)
    throw input_error(fmt::format(
        "--snaplen {}: must be 64-262144 bytes (128 keeps every RoCE header)", options.snaplen));
  auto impl = std::make_unique<Impl>();
  char err[PCAP_ERRBUF_SIZE] = {};
  impl->handle = pcap_create(options.iface.c_str(), err);
  if (impl->handle == nullptr) throw input_error(fmt::format("--iface {}: {}", options.iface, err));
  pcap_t* h = impl->handle;
  pcap_set_snaplen(h, static_cast<int>(options.snaplen));
  pcap_set_promisc(h, 1);
  pcap_set_buffer_size(h,
                       static_cast<int>(std::min<std::uint32_t>(options.buffer_bytes, 1u << 30)));
  // Immediate mode off: the kernel fills whole blocks, which is what keeps up at line rate.
  pcap_set_immediate_mode(h, 0);
  pcap_set_timeout(h, static_cast<int>(options.block_timeout_ms));
  pcap_set_tstamp_precision(h, PCAP_TSTAMP_PRECISION_NANO);
  const int status = pcap_activate(h);
  if (status < 0) {
    const std::string why = pcap_message(h, status);
    if (status == PCAP_ERROR_NO_SUCH_DEVICE)
      throw input_error(fmt::format("--iface {}: no such interface (see 'ip link show'): {}",
                                    options.iface, why));
    if (status == PCAP_ERROR_PERM_DENIED)
      throw Error(
          ExitCode::bad_input,
          fmt::format("--iface {}: capturing needs root or CAP_NET_RAW: {}", options.iface, why));
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot start the capture: {}", options.iface, why));
  }
  if (!options.outbound_too && pcap_setdirection(h, PCAP_D_IN) != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot restrict the capture to inbound frames: {}",
                            options.iface, pcap_geterr(h)));
  if (pcap_datalink(h) != DLT_EN10MB)
    throw input_error(fmt::format("--iface {}: not an Ethernet interface (link type {})",
                                  options.iface, pcap_datalink_val_to_name(pcap_datalink(h))));
  const std::string expression =
      options.remote_mirrors ? remote_mirror_bpf_expression() : bpf_expression(options.filter);
  if (!expression.empty()) {
    bpf_program program{};
    if (pcap_compile(h, &program, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("--filter {}: the BPF filter does not compile: {}",
                              to_string(options.filter), pcap_geterr(h)));
    const int set = pcap_setfilter(h, &program);
    pcap_freecode(&program);
    if (set != 0)
      throw Error(ExitCode::infrastructure, fmt::format("--iface {}: cannot install the filter: {}",
                                                        options.iface, pcap_geterr(h)));
  }
  if (options.fanout_group != 0) {
    // IP fragments are put back together before hashing, so they land with their flow.
    const int fanout = options.fanout_group | (PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG)
                                                  << 16;
    if (::setsockopt(pcap_fileno(h), SOL_PACKET, PACKET_FANOUT, &fanout, sizeof fanout) != 0)
      throw Error(ExitCode::infrastructure,
                  fmt::format("--iface {}: cannot join fanout group {} (PACKET_FANOUT): {}",
                              options.iface, options.fanout_group, std::strerror(errno)));
  }
  impl->snaplen = options.snaplen;
  impl->block_timeout = std::chrono::milliseconds(options.block_timeout_ms);
  impl->arena.resize(max_frames_per_dispatch * options.snaplen);
  impl->info.name = options.iface;
  impl->info.description = fmt::format("rocehil pcap ({})", pcap_lib_version());
  impl->info.bpf_filter = expression;
  impl->info.speed_bps = interface_speed_bps(options.iface);
  return std::unique_ptr<PcapSource>(new PcapSource(std::move(impl)));
}

PcapSource::PcapSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PcapSource::~PcapSource() = default;

std::size_t PcapSource::next_batch(std::span<Frame> out) {
  Impl& s = *impl_;
  if (s.finished || out.empty()) return 0;
  while (!s.draining) {
    if (s.stopping.load(std::memory_order_acquire)) {
      // A partly filled block goes to user space when its timeout retires it: wait that long
      // (plus a margin) for the last frames, reading without blocking.
      s.draining = true;
      s.drain_until =
          std::chrono::steady_clock::now() + s.block_timeout * 2 + std::chrono::milliseconds(50);
      pcap_setnonblock(s.handle, 1, nullptr);
      break;
    }
    const std::size_t n = s.dispatch(out);
    if (n > 0) return n;
  }
  while (std::chrono::steady_clock::now() < s.drain_until) {
    const std::size_t n = s.dispatch(out);
    if (n > 0) return n;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  s.finished = true;
  return 0;
}

void PcapSource::stop() noexcept {
  impl_->stopping.store(true, std::memory_order_release);
  // Wakes a pcap_dispatch blocked in poll() (libpcap >= 1.10 signals an eventfd).
  pcap_breakloop(impl_->handle);
}

CaptureCounters PcapSource::counters() {
  CaptureCounters c;
  c.captured = impl_->captured;
  pcap_stat ps{};
  if (pcap_stats(impl_->handle, &ps) == 0) {
    c.dropped_buffer = ps.ps_drop;
    c.dropped_interface = ps.ps_ifdrop;
  }
  return c;
}

const InterfaceInfo& PcapSource::interface_info() const noexcept {
  return impl_->info;
}

}  // namespace rocehil::capture
