#include "dpdk/eal.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>

#include "dpdk/af_packet.hpp"
#include "rocehil/common/error.hpp"

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

namespace rocehil::capture::dpdk {

namespace {

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

// The first CPU this thread may run on, for the EAL's one lcore.
int first_allowed_cpu(const cpu_set_t& set) {
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) return cpu;
  return 0;
}

}  // namespace

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

}  // namespace rocehil::capture::dpdk
