#include "rocehil/capture/dpdk_source.hpp"

#include <fmt/format.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"

// DPDK's headers are C for C compilers: they trip -Wconversion, -Wpedantic and -Wshadow in
// their inline functions. Only their own lines are exempted; the code below keeps every warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wdeprecated-volatile"
#endif
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#pragma GCC diagnostic pop

// How this backend behaves, and why:
//
// EAL, once per process. rte_eal_init cannot run twice, so the first open() initialises it with
// its options and later opens must pass the same eal_args (they then reuse it; a different
// string is refused with an explanation). rte_eal_cleanup is never called: it may only run once,
// after which the EAL cannot come back, and an agent runs capture after capture in one process.
// To the user's arguments open() adds, each only when the user gave nothing of the kind:
//   --in-memory                  no shared files in /var/run/dpdk, so two rocehil processes, or
//                                a stale run, never collide; --no-shconf instead with --no-huge
//                                or --legacy-mem, which --in-memory refuses (neither is added
//                                with --file-prefix, --no-shconf, --proc-type);
//   --log-level=lib.*:error      the libraries' start-up chatter off, drivers' notices kept
//                                (skipped with any --log-level);
//   -m 512                       with --no-huge, whose default of 64 MB cannot hold the default
//                                mempool (16383 mbufs of 2.3 KB is 38 MB) next to the EAL's own
//                                needs; the pages are only touched when used;
//   -l <cpu>                     one lcore (the first CPU this process may run on) instead of a
//                                pinned, idle EAL thread on every CPU; the calling thread's CPU
//                                affinity, which rte_eal_init pins to that lcore, is restored.
// DPDK's log goes to stderr only (not also to syslog), and while rte_eal_init parses the
// arguments the C stdout points at stderr: the EAL prints its usage with printf on a bad
// option, which would otherwise land in `rocehil capture --json` output or the agent's replies.
// -h, --help and --log-level=help are refused because the EAL answers them with exit().
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
// stop() sets an atomic flag (safe from another thread or a signal handler). The next_batch in
// progress then drains what the port already holds, at most rx_descriptors more frames (an
// endless source such as net_null would never run dry), and returns 0.

namespace rocehil::capture {

bool dpdk_available() noexcept {
  return true;
}

namespace {

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

std::vector<std::string> split_blanks(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// "--in-memory" as a word, or "--name=value".
bool has_long(const std::vector<std::string>& args, std::string_view name) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a == name || (a.size() > name.size() && a.starts_with(name) && a[name.size()] == '=');
  });
}

// "-m 512" or "-m512".
bool has_short(const std::vector<std::string>& args, char letter) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a.size() >= 2 && a[0] == '-' && a[1] == letter;
  });
}

// key=value pairs of a device's arguments ("rx_pcap=/x.pcap,infinite_rx=0").
std::vector<std::pair<std::string, std::string>> device_kvargs(std::string_view args) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i <= args.size()) {
    std::size_t comma = args.find(',', i);
    if (comma == std::string_view::npos) comma = args.size();
    const std::string_view item = args.substr(i, comma - i);
    if (!item.empty()) {
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos)
        out.emplace_back(std::string(item), std::string());
      else
        out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
    i = comma + 1;
  }
  return out;
}

std::size_t kv_count(const std::vector<std::pair<std::string, std::string>>& kv,
                     std::string_view key) {
  return static_cast<std::size_t>(
      std::count_if(kv.begin(), kv.end(), [&](const auto& p) { return p.first == key; }));
}

std::string kv_value(const std::vector<std::pair<std::string, std::string>>& kv,
                     std::string_view key) {
  for (const auto& [k, v] : kv)
    if (k == key) return v;
  return {};
}

std::uint64_t kv_number(const std::vector<std::pair<std::string, std::string>>& kv,
                        std::string_view key, std::uint64_t fallback) {
  const std::string v = kv_value(kv, key);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() && end == v.data() + v.size() && !v.empty() ? n : fallback;
}

std::uint64_t sysfs_speed_bps(const std::string& iface) {
  // Mb/s, or -1 / an error (EINVAL) for interfaces without a speed, such as veth.
  if (iface.empty() || iface.find('/') != std::string::npos) return 0;
  std::ifstream in("/sys/class/net/" + iface + "/speed");
  long long mbps = -1;
  if (!(in >> mbps) || mbps <= 0) return 0;
  return static_cast<std::uint64_t>(mbps) * 1'000'000;
}

// What one port holds across the sources opened on it in this process.
struct PortSlot {
  bool in_use = false;
  bool used_before = false;
  rte_mempool* pool = nullptr;
  std::uint32_t pool_mbufs = 0;
  std::uint16_t pool_room = 0;
};

// Process-wide DPDK state, guarded by `mutex`. Never destroyed: a source destroyed during static
// destruction still finds it.
struct Eal {
  std::mutex mutex;
  bool initialised = false;
  std::vector<std::string> user_args;  // as the first successful open() gave them
  std::string failure;                 // why the last rte_eal_init failed
  // rte_eal_init may keep pointers into its argv: every attempt's lives as long as the process.
  std::list<std::vector<std::string>> argv_text;
  std::list<std::vector<char*>> argv;
  std::array<PortSlot, RTE_MAX_ETHPORTS> ports{};
  // The AF_PACKET sockets net_af_packet opened while rte_eal_init probed it: {fd, ifindex}.
  std::vector<std::pair<int, int>> packet_sockets;
  unsigned pool_generation = 0;
};

Eal& eal() {
  static Eal* const state = new Eal();
  return *state;
}

std::string dpdk_error(int errnum) {
  return rte_strerror(errnum < 0 ? -errnum : errnum);
}

std::vector<std::string> port_names() {
  std::vector<std::string> names;
  for (std::uint16_t p = 0; p < RTE_MAX_ETHPORTS; ++p) {
    if (!rte_eth_dev_is_valid_port(p)) continue;
    char name[RTE_ETH_NAME_MAX_LEN] = {};
    if (rte_eth_dev_get_name_by_port(p, name) == 0) names.emplace_back(name);
  }
  return names;
}

std::string listed(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The first CPU this thread may run on, for the EAL's one lcore.
int first_allowed_cpu(const cpu_set_t& set) {
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) return cpu;
  return 0;
}

std::vector<int> open_sockets() {
  std::vector<int> fds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    const std::string name = entry.path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) fds.push_back(fd);
  }
  return fds;
}

// net_af_packet in DPDK 22.11 never reads PACKET_STATISTICS, so frames the kernel dropped because
// its ring was full appear nowhere in rte_eth_stats (DPDK 25.03 added them as imissed). Its
// sockets are found instead: AF_PACKET, TPACKET_V2 (libpcap uses V3), made during rte_eal_init.
std::vector<std::pair<int, int>> new_packet_sockets(const std::vector<int>& before) {
  std::vector<std::pair<int, int>> found;
  for (const int fd : open_sockets()) {
    if (std::find(before.begin(), before.end(), fd) != before.end()) continue;
    int domain = 0;
    socklen_t len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET) continue;
    int version = -1;
    len = sizeof(version);
    if (getsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, &len) != 0 || version != TPACKET_V2)
      continue;
    sockaddr_ll addr{};
    len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    found.emplace_back(fd, addr.sll_ifindex);
  }
  return found;
}

// Frames the kernel dropped on this socket since the last call (reading resets the count).
std::uint64_t take_packet_drops(int fd) noexcept {
  tpacket_stats st{};
  socklen_t len = sizeof(st);
  if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) != 0) return 0;
  return st.tp_drops;
}

// A packet socket also sees what the host sends out of the interface; a DPDK port, like the NIC
// it stands for, receives only what arrives (and the pcap backend keeps inbound frames by
// default). PACKET_IGNORE_OUTGOING has no effect on net_af_packet's sockets, which join a fanout
// group, so a socket filter drops frames of type PACKET_OUTGOING instead. Should it fail,
// outbound frames show: nothing is lost.
void drop_outgoing(int fd) noexcept {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(SKF_AD_OFF + SKF_AD_PKTTYPE)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
  };
  const sock_fprog program{.len = static_cast<unsigned short>(std::size(code)), .filter = code};
  setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program));
}

void init_eal_locked(Eal& e, const std::string& text) {
  const std::vector<std::string> user = split_blanks(text);
  for (std::size_t i = 0; i < user.size(); ++i) {
    const std::string& a = user[i];
    if (a == "-h" || a == "--help" || a == "--log-level=help" ||
        (a == "--log-level" && i + 1 < user.size() && user[i + 1] == "help"))
      throw input_error(fmt::format(
          "--dpdk-args \"{}\": '{}' makes the DPDK EAL print its help and exit the process; "
          "leave it out (the EAL options are in DPDK's Linux guide, 'EAL parameters')",
          text, a));
  }

  if (e.initialised) {
    if (user == e.user_args) return;
    throw input_error(fmt::format(
        "--dpdk-args \"{}\": the DPDK EAL of this process was initialised with \"{}\" and "
        "initialises only once per process: give every DPDK capture of one rocehil process the "
        "same EAL arguments (choose the port with --iface), or run another rocehil process",
        text, join(e.user_args)));
  }
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  const bool have_affinity = sched_getaffinity(0, sizeof(affinity), &affinity) == 0;

  std::vector<std::string> args{"rocehil"};
  if (!has_long(user, "--log-level")) args.emplace_back("--log-level=lib.*:error");
  if (!has_long(user, "--in-memory") && !has_long(user, "--file-prefix") &&
      !has_long(user, "--no-shconf") && !has_long(user, "--proc-type")) {
    // --in-memory refuses the legacy memory mode that --no-huge implies; --no-shconf is its
    // part that keeps the files away.
    const bool legacy = has_long(user, "--no-huge") || has_long(user, "--legacy-mem");
    args.emplace_back(legacy ? "--no-shconf" : "--in-memory");
  }
  if (has_long(user, "--no-huge") && !has_short(user, 'm') && !has_long(user, "--socket-mem")) {
    args.emplace_back("-m");
    args.emplace_back("512");
  }
  if (!has_short(user, 'l') && !has_short(user, 'c') && !has_long(user, "--lcores") &&
      !has_long(user, "--main-lcore")) {
    args.emplace_back("-l");
    args.emplace_back(std::to_string(have_affinity ? first_allowed_cpu(affinity) : 0));
  }
  args.insert(args.end(), user.begin(), user.end());

  std::vector<std::string>& argv_text = e.argv_text.emplace_back(args);
  std::vector<char*>& argv = e.argv.emplace_back();
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  const std::vector<int> sockets_before = open_sockets();
  rte_openlog_stream(stderr);
  std::fflush(stdout);
  std::FILE* const saved_stdout = stdout;
  stdout = stderr;
  const int rc = rte_eal_init(static_cast<int>(argv_text.size()), argv.data());
  const int err = rte_errno;
  stdout = saved_stdout;
  if (have_affinity) pthread_setaffinity_np(pthread_self(), sizeof(affinity), &affinity);

  if (rc < 0) {
    if (err == EALREADY && !e.failure.empty())
      throw input_error(fmt::format(
          "--dpdk-args \"{}\": the DPDK EAL failed to initialise earlier in this process ({}) "
          "and cannot be tried again: fix the EAL arguments and start rocehil again",
          text, e.failure));
    e.failure = fmt::format("rte_eal_init: {}", rte_strerror(err));
    throw Error(ExitCode::bad_input,
                fmt::format("--dpdk-args \"{}\": the DPDK EAL did not initialise: {} (arguments "
                            "given to rte_eal_init: {}); DPDK's messages above say why; virtual "
                            "devices need no hugepages with --no-huge --no-pci",
                            text, rte_strerror(err), join(args)),
                err);
  }
  e.initialised = true;
  e.packet_sockets = new_packet_sockets(sockets_before);
  e.user_args = user;
}

std::uint16_t find_port(const std::string& wanted) {
  const std::vector<std::string> names = port_names();
  std::uint16_t port = 0;
  if (wanted.empty()) {
    if (names.size() == 1 && rte_eth_dev_get_port_by_name(names[0].c_str(), &port) == 0)
      return port;
    if (names.empty())
      throw input_error(
          "dpdk: the EAL found no port: add one to the EAL arguments, e.g. "
          "--vdev=net_af_packet0,iface=eth3 or -a 0000:3b:00.0 (a NIC bound to vfio-pci)");
    throw input_error(fmt::format("dpdk: the EAL found {} ports ({}): name one with --iface",
                                  names.size(), listed(names)));
  }
  if (rte_eth_dev_get_port_by_name(wanted.c_str(), &port) == 0) return port;
  // PCI ports are named with their domain: accept "3b:00.0" for "0000:3b:00.0".
  const std::string with_domain = "0000:" + wanted;
  if (rte_eth_dev_get_port_by_name(with_domain.c_str(), &port) == 0) return port;
  throw input_error(fmt::format(
      "--iface {}: no such DPDK port; the EAL has: {} (a port comes from a --vdev or -a EAL "
      "argument)",
      wanted, listed(names)));
}

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

class DpdkPortSource final : public DpdkSource {
 public:
  struct Setup {
    std::uint16_t port = 0;
    InterfaceInfo info;
    std::uint32_t snaplen = 0;
    std::uint16_t burst = 0;
    std::uint32_t drain_budget = 0;
    bool replay = false;
    int ts_offset = -1;  // the rx timestamp dynamic field, when its unit is known
    std::uint64_t ts_flag = 0;
    rte_eth_stats baseline{};
    std::vector<int> packet_sockets;  // net_af_packet's, read for the kernel's ring drops
  };

  explicit DpdkPortSource(Setup setup)
      : s_(std::move(setup)),
        kept_(s_.burst, nullptr),
        // Not zeroed: pages a short-frame capture never gathers into are never touched.
        gather_(std::make_unique_for_overwrite<std::uint8_t[]>(static_cast<std::size_t>(s_.burst) *
                                                               s_.snaplen)) {}

  ~DpdkPortSource() override {
    release();
    rte_eth_dev_stop(s_.port);
    Eal& e = eal();
    std::lock_guard lock(e.mutex);
    e.ports[s_.port].in_use = false;
  }

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
      const std::uint16_t n = ask == 0 ? 0 : rte_eth_rx_burst(s_.port, 0, kept_.data(), ask);
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
    {
      std::lock_guard lock(kernel_drops_mutex_);
      for (const int fd : s_.packet_sockets) kernel_drops_ += take_packet_drops(fd);
      c.dropped_buffer = kernel_drops_;
    }
    rte_eth_stats now{};
    if (rte_eth_stats_get(s_.port, &now) == 0) {
      const auto since = [](std::uint64_t v, std::uint64_t base) {
        return v >= base ? v - base : 0;
      };
      c.dropped_buffer +=
          since(now.imissed, s_.baseline.imissed) + since(now.rx_nombuf, s_.baseline.rx_nombuf);
      c.dropped_interface = since(now.ierrors, s_.baseline.ierrors);
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

}  // namespace

std::unique_ptr<DpdkSource> DpdkSource::open(const DpdkSourceOptions& options) {
  if (options.snaplen < 64 || options.snaplen > 262144)
    throw input_error(fmt::format(
        "--snaplen {}: must be 64-262144 bytes (128 keeps every RoCE header)", options.snaplen));
  if (options.burst == 0 || options.burst > 1024)
    throw input_error(fmt::format("dpdk burst {}: must be 1-1024 frames", options.burst));
  if (options.rx_descriptors == 0)
    throw input_error("dpdk rx_descriptors 0: give the receive ring a size (4096 is usual)");

  Eal& e = eal();
  std::lock_guard lock(e.mutex);
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

  // The drivers whose virtual devices make several receive queues: rocehil reads queue 0 only,
  // and frames spread to the others would be lost without a count.
  if (driver == "net_af_packet" && kv_number(kv, "qpairs", 1) > 1)
    throw input_error(fmt::format(
        "--iface {}: qpairs={} spreads the frames over several queues and rocehil reads one; use "
        "qpairs=1",
        name, kv_value(kv, "qpairs")));
  if (driver == "net_pcap" &&
      kv_count(kv, "rx_pcap") + kv_count(kv, "rx_iface") + kv_count(kv, "rx_iface_in") > 1)
    throw input_error(fmt::format(
        "--iface {}: the device has several receive queues (rx_pcap/rx_iface given more than "
        "once) and rocehil reads one; give one source per device",
        name));
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

  // Configure: one RX queue, one TX queue where the driver has any (some refuse zero), and a
  // jumbo MTU with scatter where the driver offers scatter; without that offer the driver's
  // default stays (virtual devices take any length anyway).
  const std::uint16_t nb_tx = dev.max_tx_queues > 0 ? 1 : 0;
  rte_eth_conf conf{};
  if ((dev.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
    conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
    conf.rxmode.mtu = std::min<std::uint32_t>(dev.max_mtu, jumbo_mtu);
  }
  int rc = rte_eth_dev_configure(port, 1, nb_tx, &conf);
  if (rc != 0 && conf.rxmode.offloads != 0) {
    conf = rte_eth_conf{};
    rc = rte_eth_dev_configure(port, 1, nb_tx, &conf);
  }
  if (rc != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot configure the DPDK port ({}): {}", name, driver,
                            dpdk_error(rc)),
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

  const int socket = rte_eth_dev_socket_id(port);
  rte_mempool* old_pool = nullptr;
  if (slot.pool == nullptr || slot.pool_mbufs != options.mbufs || slot.pool_room != data_room) {
    const std::string pool_name = fmt::format("rocehil{}_{}", port, ++e.pool_generation);
    rte_mempool* pool =
        rte_pktmbuf_pool_create(pool_name.c_str(), options.mbufs, cache, 0, data_room, socket);
    if (pool == nullptr) {
      const int err = rte_errno;
      const std::uint64_t mib =
          (std::uint64_t{options.mbufs} * (data_room + sizeof(rte_mbuf) + 64)) >> 20;
      throw Error(ExitCode::infrastructure,
                  fmt::format("--iface {}: cannot allocate {} packet buffers of {} bytes (about "
                              "{} MiB): {}; give the EAL more memory (-m 512 with --no-huge, "
                              "or more hugepages) or use fewer buffers",
                              name, options.mbufs, data_room, mib, rte_strerror(err)),
                  err);
    }
    old_pool = slot.pool;
    slot.pool = pool;
    slot.pool_mbufs = options.mbufs;
    slot.pool_room = data_room;
  }

  rte_eth_rxconf rxconf = dev.default_rxconf;
  rxconf.offloads = conf.rxmode.offloads;
  if (rc = rte_eth_rx_queue_setup(port, 0, nb_rxd, static_cast<unsigned>(socket), &rxconf,
                                  slot.pool);
      rc != 0)
    throw Error(ExitCode::infrastructure,
                fmt::format("--iface {}: cannot set up the DPDK receive queue ({} descriptors): "
                            "{}",
                            name, nb_rxd, dpdk_error(rc)),
                -rc);
  // The queue set up again released the old one's buffers: the old pool is unused now.
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
    for (unsigned flushed = 0; flushed < stale_flush_limit;) {
      const std::uint16_t n = rte_eth_rx_burst(port, 0, junk.data(), junk.size());
      if (n == 0) break;
      rte_pktmbuf_free_bulk(junk.data(), n);
      flushed += n;
    }
  }

  DpdkPortSource::Setup setup;
  setup.port = port;
  setup.snaplen = options.snaplen;
  setup.burst = options.burst;
  setup.drain_budget = std::max<std::uint32_t>(nb_rxd, options.burst);
  setup.replay = replay;
  // Only net_pcap's unit is known (microseconds since the epoch, see above).
  if (driver == "net_pcap") {
    const int offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, nullptr);
    const int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, nullptr);
    if (offset >= 0 && bit >= 0) {
      setup.ts_offset = offset;
      setup.ts_flag = std::uint64_t{1} << bit;
    }
  }
  setup.info.name = name;
  setup.info.description = "dpdk " + driver;
  // Virtual devices report a made-up link (10G for net_pcap, net_af_packet, net_null), and the
  // speed converts pause quanta to time: report what is known, else 0 (unknown).
  if (driver == "net_af_packet") {
    setup.info.speed_bps = sysfs_speed_bps(kv_value(kv, "iface"));
  } else if (!is_vdev) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP &&
        link.link_speed != RTE_ETH_SPEED_NUM_NONE && link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
      setup.info.speed_bps = std::uint64_t{link.link_speed} * 1'000'000;
  }
  // Counters are deltas from here: reset where the driver can, and subtract a baseline where it
  // cannot.
  rte_eth_stats_reset(port);
  rte_eth_stats_get(port, &setup.baseline);
  if (driver == "net_af_packet") {
    for (const auto& [fd, ifindex] : e.packet_sockets)
      if (ifindex > 0 && static_cast<std::uint32_t>(ifindex) == dev.if_index) {
        drop_outgoing(fd);
        take_packet_drops(fd);  // from now on
        setup.packet_sockets.push_back(fd);
      }
  }

  auto source = std::make_unique<DpdkPortSource>(std::move(setup));
  slot.used_before = true;
  claim.keep = true;
  return source;
}

}  // namespace rocehil::capture
