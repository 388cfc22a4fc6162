#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "dataplane/switchds.hpp"
#include "guest_nic/guest_nics.hpp"
#include "hosts/guests.hpp"
#include "mirrors/mirror_relays.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/inventory_file.hpp"
#include "rocehil/testbed/scripts.hpp"
#include "rocehil/testbed/slurm_cluster.hpp"
#include "rocehil/testbed/ssh_files.hpp"
#include "rocehil/testbed/state.hpp"
#include "rocehil/testbed/switch_counters.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "routing/frr_daemons.hpp"
#include "switches/switch_agents.hpp"
#include "tools/files.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"
#include "tools/receive_steering.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;

// Keys are kept across down/up, so known_hosts entries and a user's ssh config stay valid.
void ensure_key(const std::string& path, const std::string& comment) {
  if (fs::exists(path) && fs::exists(path + ".pub")) return;
  fs::remove(path);
  fs::remove(path + ".pub");
  run_checked("generating an ssh key",
              {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path});
}

void make_directories(const TestbedPaths& paths) {
  for (const auto& d : {paths.dir, paths.ssh_dir(), paths.run_dir()}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec)
      throw input_error(
          fmt::format("--dir: cannot create {}: {}; choose a writable directory", d, ec.message()));
  }
  fs::permissions(paths.ssh_dir(), fs::perms::owner_all);
}

// The kernel's IPv4 neighbour table is one for every namespace, and holds 1,024 entries by
// default: a few hundred hosts' fabric and management links need more, and past the limit new
// neighbours fail ("neighbor table overflow"), so packets to some hosts vanish and their QPs
// end in retry_exceeded. Raised, never lowered, here; and left raised after down, as another
// testbed may be up.
void make_room_in_neighbour_table(const Topology& t, const StepReporter& report) {
  constexpr std::string_view dir = "/proc/sys/net/ipv4/neigh/default/";
  // Both ends of every link learn each other, as do every namespace and the root's bridge.
  const long needed = 2 * static_cast<long>(t.links.size() + t.namespaces.size());
  const auto read = [&](std::string_view name) {
    const std::string text = read_file_or_empty(fmt::format("{}{}", dir, name));
    return text.empty() ? 0L : std::stol(text);
  };
  // Room for the machine's own neighbours beside the fabric's: a few hosts' fabric fits the
  // default, and then nothing is changed.
  constexpr long machine_share = 256;
  if (read("gc_thresh3") >= needed + machine_share) return;
  const long soft_limit = 512 + needed, hard_limit = 1024 + needed;
  for (const auto& [name, value] :
       {std::pair{"gc_thresh2", soft_limit}, std::pair{"gc_thresh3", hard_limit}}) {
    if (read(name) >= value) continue;
    std::ofstream out(fmt::format("{}{}", dir, name));
    out << value << '\n';
    if (!out.flush())
      throw Error(ExitCode::infrastructure,
                  fmt::format("cannot raise net.ipv4.neigh.default.{} to {} for {} namespaces; "
                              "set it with sysctl, or bring up fewer hosts",
                              name, value, t.namespaces.size()));
  }
  report(
      fmt::format("neighbour table: net.ipv4.neigh.default.gc_thresh3 raised to {} for {} "
                  "namespaces and {} links (left raised after down)",
                  hard_limit, t.namespaces.size(), t.links.size()));
}

// Four guests under full emulation on two busy cores boot in under a minute; a machine running
// a test suite beside them may take three times that.
constexpr std::chrono::seconds guest_boot_limit{180};

// Sessions come up within a couple of seconds of their links; a machine busy with other tests
// may take several times that.
constexpr std::chrono::seconds routing_limit{60};

class FabricBuilder {
 public:
  FabricBuilder(const Topology& t, const TestbedOptions& o, const TestbedPaths& p, int mgmt_octet,
                std::string rocehil, const GuestKernel* guest_kernel, const StepReporter& r)
      : t_(t),
        o_(o),
        paths_(p),
        mgmt_octet_(mgmt_octet),
        rocehil_(std::move(rocehil)),
        guest_kernel_(guest_kernel),
        report_(r) {}

  void build() {
    report_(fmt::format("namespaces: {}", t_.namespaces.size()));
    make_room_in_neighbour_table(t_, report_);
    run_checked("creating namespaces", {"ip", "-batch", "-"}, netns_add_batch(t_));
    for (const auto& ns : t_.namespaces) {
      std::vector<std::string> argv = {"ip", "netns", "exec", ns.netns, "sysctl", "-q", "-w"};
      for (auto& s : sysctls(ns, o_)) argv.push_back(std::move(s));
      run_checked(fmt::format("setting sysctls in {}", ns.netns), argv);
    }
    report_(fmt::format("links: {} veth pairs, management bridge {} ({})", t_.links.size(),
                        t_.bridge, t_.mgmt_prefix));
    run_checked("creating links", {"ip", "-batch", "-"}, links_batch(t_));
    report_(o_.routing == Routing::bgp
                ? "addresses, hosts' routes, tbf shaping, mirrors, ECN marking, PFC counters"
                : "addresses, routes (ECMP on leaves), tbf shaping, mirrors, ECN marking, PFC "
                  "counters");
    for (const auto& ns : t_.namespaces) configure(ns);
    const auto servers = write_ssh_files();
    // Guests boot (seconds to a minute) while the switches' agents start.
    if (o_.vm.enabled && o_.lossless)
      guest_nic::start_guest_nics(t_, o_, paths_, rocehil_, report_);
    if (o_.vm.enabled) start_guests(t_, o_, paths_, *guest_kernel_, report_);
    start_sshds(servers);
    wait_for_links();
    if (o_.lossless) dataplane::start_switchds(t_, o_, paths_, rocehil_, report_);
    // Sessions come up while the rest starts; `up` waits for them last.
    if (o_.routing == Routing::bgp) start_routing(t_, o_, paths_, report_);
    start_mirror_relays(t_, paths_, rocehil_, report_);
    if (o_.vm.enabled) wait_for_guests(t_, paths_, guest_boot_limit, report_);
    wait_for_sshds(servers);
    start_switch_agents(t_, paths_, rocehil_, report_);
    if (o_.slurm) start_slurm(t_, paths_, mgmt_octet_, o_.vm.enabled, report_);
    if (o_.routing == Routing::bgp) wait_for_routing(t_, paths_, routing_limit, report_);
  }

 private:
  void configure(const Namespace& ns) {
    run_checked(fmt::format("configuring {}", ns.netns), {"ip", "-n", ns.netns, "-batch", "-"},
                namespace_ip_batch(ns, o_));
    // The soft providers of a host's processes pass each other's datagrams over loopback
    // (traffic/src/soft/shared_port.hpp), from whichever CPU the passing one runs on: steered
    // by flow, a flow passed on keeps one backlog and its order, as a switch port's does.
    // (Not measured alone: the NAKs of two-part cases ended with the passer's linger.)
    if (ns.role == Role::host && !o_.vm.enabled) steer_by_flow(ns.netns, {"lo"});
    for (const auto& argv : offload_commands(ns, o_))
      run_checked(fmt::format("turning offloads off in {}", ns.netns), argv);
    if (const auto tc = namespace_tc_batch(ns, t_, o_); !tc.empty())
      run_checked(fmt::format("configuring qdiscs in {}", ns.netns),
                  {"tc", "-n", ns.netns, "-batch", "-"}, tc);
    if (const auto nft = namespace_nft_ruleset(ns, t_, o_); !nft.empty())
      run_checked(fmt::format("loading ECN marking rules in {}", ns.netns),
                  {"ip", "netns", "exec", ns.netns, "nft", "-f", "-"}, nft);
    if (const auto pfc = pfc_nft_ruleset(ns, t_); !pfc.empty())
      run_checked(fmt::format("loading PFC counters in {}", ns.netns),
                  {"ip", "netns", "exec", ns.netns, "nft", "-f", "-"}, pfc);
    if (const auto mirror = mirror_nft_ruleset(ns, t_, o_); !mirror.empty())
      run_checked(fmt::format("loading mirror rules in {}", ns.netns),
                  {"ip", "netns", "exec", ns.netns, "nft", "-f", "-"}, mirror);
  }

  // The kernel reports a veth's operational state up to a second after both ends are up; wait,
  // so that `status` right after `up` agrees with it.
  void wait_for_links() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (const auto& ns : t_.namespaces) {
      while (true) {
        std::string down;
        const nlohmann::json links = ip_json(ns.netns, {"link", "show"});
        for (const auto& i : ns.interfaces) {
          bool up = false;
          for (const auto& l : links)
            if (l.value("ifname", "") == i.name) up = l.value("operstate", "") == "UP";
          if (!up) down = i.name;
        }
        if (down.empty()) break;
        if (std::chrono::steady_clock::now() > deadline)
          throw Error(ExitCode::infrastructure,
                      fmt::format("interface {} in {} is not operationally up after 5 s; see 'ip "
                                  "-n {} link show {}'",
                                  down, ns.netns, ns.netns, down));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }

  // Keys and configurations of every sshd, a guest's too: its stage 2 starts sshd with them.
  std::vector<const Namespace*> write_ssh_files() {
    std::vector<const Namespace*> servers;
    for (const auto& ns : t_.namespaces)
      if (runs_sshd(ns)) servers.push_back(&ns);
    report_(fmt::format("sshd: {} servers, keys in {}", servers.size(), paths_.ssh_dir()));
    ensure_key(paths_.identity(), fmt::format("rocehil-testbed-{}", t_.id));
    write_file(paths_.authorized_keys(), read_file(paths_.identity() + ".pub"),
               fs::perms::owner_read | fs::perms::owner_write);
    std::map<std::string, std::string> host_keys;
    for (const Namespace* ns : servers) {
      ensure_key(paths_.host_key(*ns), ns->netns);
      host_keys[ns->name] = read_file(paths_.host_key(*ns) + ".pub");
      write_file(paths_.sshd_config(*ns), sshd_config(*ns, paths_),
                 fs::perms::owner_read | fs::perms::owner_write);
    }
    write_file(paths_.known_hosts(), known_hosts(t_, host_keys),
               fs::perms::owner_read | fs::perms::owner_write);
    write_file(paths_.ssh_config(), ssh_client_config(t_, paths_),
               fs::perms::owner_read | fs::perms::owner_write);
    return servers;
  }

  // The sshds of namespaces; a guest's runs in the guest.
  void start_sshds(const std::vector<const Namespace*>& servers) {
    // sshd refuses to start without its privilege separation directory, which systemd would
    // create on a booted Debian; in a container nobody has.
    fs::create_directories("/run/sshd");
    const std::string sshd = find_in_path("sshd");
    for (const Namespace* ns : servers) {
      if (is_guest(*ns)) continue;
      run_checked(fmt::format("starting sshd in {}", ns->netns),
                  {"ip", "netns", "exec", ns->netns, sshd, "-f", paths_.sshd_config(*ns), "-E",
                   paths_.sshd_log(*ns)});
    }
  }

  bool is_guest(const Namespace& ns) const { return o_.vm.enabled && ns.role == Role::host; }

  // Each attempt waits for the banner until the deadline: sshd forks and re-executes itself for
  // every connection, which in a guest under full emulation can take longer than any short
  // attempt, and an attempt given up on only starts another such child.
  void wait_for_sshds(const std::vector<const Namespace*>& servers) {
    const auto deadline = std::chrono::steady_clock::now() +
                          (o_.vm.enabled ? std::chrono::seconds(60) : std::chrono::seconds(10));
    for (const Namespace* ns : servers) {
      std::string detail;
      const auto remaining_ms = [&] {
        return static_cast<int>(
            std::max<long long>(500, std::chrono::duration_cast<std::chrono::milliseconds>(
                                         deadline - std::chrono::steady_clock::now())
                                         .count()));
      };
      while (!ssh_banner(ns->mgmt_address, remaining_ms(), detail)) {
        if (std::chrono::steady_clock::now() > deadline)
          throw Error(ExitCode::infrastructure,
                      fmt::format("sshd in {} does not answer on {}:22 ({}); its log is {}",
                                  ns->netns, ns->mgmt_address, detail, paths_.sshd_log(*ns)));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }

  const Topology& t_;
  const TestbedOptions& o_;
  const TestbedPaths& paths_;
  int mgmt_octet_;
  std::string rocehil_;
  const GuestKernel* guest_kernel_;  // --vm only
  const StepReporter& report_;
};

}  // namespace

UpResult up(TestbedOptions options, const StepReporter& report) {
  const auto start = std::chrono::steady_clock::now();
  if (options.dir.empty())
    throw input_error("--dir is required: the directory for the testbed's files");
  options.dir = absolute_dir(options.dir);
  if (options.id.empty()) options.id = derive_id(options.dir);
  validate(options);
  require_root("up");
  require_tools({"ip", "tc", "nft", "sysctl", "sshd", "ssh-keygen", "snmpd", "lldpd", "lldpcli"});
  if (options.slurm) require_tools({"munged", "slurmctld", "slurmd", "sinfo"});
  if (options.routing == Routing::bgp) require_frr();
  if (options.lossless) require_tools({"ethtool"});

  const TestbedPaths paths{options.dir};
  if (!testbed_namespaces(options.id).empty() || !root_links(options.id).empty())
    throw input_error(fmt::format(
        "testbed {} is already up (its namespaces or links exist); run 'rocehil testbed down --dir "
        "{}' first, or give another --id",
        options.id, options.dir));
  const auto octet = choose_mgmt_octet(options.id, root_route_prefixes());
  if (!octet)
    throw input_error(
        "no free /23 left in 198.19.0.0/16 for the management network; bring other testbeds "
        "down");
  // snmpd runs this binary as its counters handler, and each spine as its mirror relay: `up`
  // runs inside rocehil.
  std::error_code ec;
  const std::string rocehil = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec || rocehil.find_first_of(" \t\n\"'") != std::string::npos)
    throw input_error(fmt::format(
        "the rocehil binary's path '{}' cannot go into snmpd.conf (it holds white space or "
        "quotes, or /proc/self/exe is unreadable); run rocehil from another path",
        rocehil));
  make_directories(paths);
  // Checked before anything is made: a missing QEMU or kernel is one line, not a half fabric.
  std::optional<GuestKernel> guest_kernel;
  if (options.vm.enabled) {
    report("guests: initramfs and stage 2 for QEMU");
    guest_kernel = prepare_guests(options, paths);
  }
  TestbedState state{options, *octet, "building"};
  write_state(paths.state(), state);

  UpResult result{build_topology(options, *octet), paths, 0, std::nullopt};
  report(fmt::format("testbed {}: {} hosts in {} racks, {} spines, in {}", options.id,
                     options.hosts, options.racks, options.spines, options.dir));
  try {
    FabricBuilder(result.topology, options, paths, *octet, rocehil,
                  guest_kernel ? &*guest_kernel : nullptr, report)
        .build();
    std::ofstream(paths.inventory(), std::ios::trunc)
        << inventory_yaml(result.topology, options, paths);
  } catch (const Error& e) {
    // Leave nothing half-made behind: the error says what failed, down removes the rest.
    const StepReporter quiet = [](std::string_view) {};
    try {
      down(options.dir, options.id, quiet);
    } catch (const Error&) {
    }
    throw Error(e.exit_code(), fmt::format("{} (what was made is removed again)", e.what()),
                e.code());
  }
  if (options.slurm) result.slurm_conf = slurm_paths(paths, options.id).conf();
  state.phase = "up";
  write_state(paths.state(), state);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace rocehil::testbed
