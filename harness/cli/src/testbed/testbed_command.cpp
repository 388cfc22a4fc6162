#include "testbed/testbed_command.hpp"
#include "testbed/testbed_link_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/journal.hpp"
#include "rocehil/settings/nic_files.hpp"
#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/snmp_pass.hpp"
#include "rocehil/testbed/status_json.hpp"
#include "rocehil/testbed/switch_knobs.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "testbed/testbed_dataplane_commands.hpp"
#include "testbed/testbed_host_settings.hpp"
#include "testbed/testbed_leftovers.hpp"
#include "testbed/testbed_relay_command.hpp"
#include "testbed/testbed_text.hpp"

namespace rocehil::cli {

namespace {

struct CommonOptions {
  std::string dir;
  std::string id;
  bool json = false;
  bool quiet = false;
};

void add_common(CLI::App* cmd, CommonOptions& o, bool dir_required) {
  auto* dir = cmd->add_option("--dir", o.dir,
                              "The testbed's directory: keys, sshd configs, state, inventory.yaml");
  if (dir_required) dir->required();
  cmd->add_option("--id", o.id,
                  "Testbed id, the prefix of every namespace, link and process name (default: "
                  "derived from --dir; 1-6 lowercase letters and digits)");
  cmd->add_flag("--json", o.json, "Print JSON (schema_version 1) instead of text");
  cmd->add_flag("--quiet", o.quiet, "Do not print each step on stderr");
}

testbed::StepReporter reporter(const CommonOptions& o) {
  if (o.quiet) return [](std::string_view) {};
  return [](std::string_view step) { fmt::print(stderr, "testbed: {}\n", step); };
}

void print_json(const nlohmann::json& j) {
  fmt::print("{}\n", j.dump(2));
}

// `testbed snmp-counters`: the pass_persist handler each switch's snmpd starts (snmpd.conf), one
// per MIB, inside the switch's namespace. Not for people: hidden from --help.
void add_snmp_counters_command(CLI::App* testbed, int& exit_code) {
  auto netns = std::make_shared<std::string>();
  auto mib = std::make_shared<std::string>();
  CLI::App* counters = testbed->add_subcommand(
      "snmp-counters",
      "snmpd's pass_persist handler in a switch namespace: PFC frames (nftables) and queue "
      "counters (the tbf's, or a --lossless switch's 8 queues from its counters file) under "
      "CISCO-PFC-EXT-MIB and CISCO-SWITCH-QOS-MIB");
  counters->group("");
  counters->add_option("--netns", *netns, "The switch's namespace, rocehil-ID-NAME")->required();
  counters->add_option("--mib", *mib, "The subtree snmpd hands this handler")
      ->required()
      ->check(CLI::IsMember({"pfc", "qos"}));
  counters->callback([netns, mib, &exit_code] {
    testbed::id_of_netns(*netns);  // a bad name is an error now, not a NONE to every request
    const testbed::CounterMib served = *testbed::counter_mib_from(*mib);
    testbed::PassPersist session(
        served, [netns, served] { return testbed::read_port_counters(*netns, served); });
    // Until snmpd closes the pipe; each answer flushed, snmpd waits for it.
    for (std::string line; std::getline(std::cin, line);) {
      const std::string reply = session.feed(line);
      if (reply.empty()) continue;
      std::fwrite(reply.data(), 1, reply.size(), stdout);
      std::fflush(stdout);
    }
    exit_code = 0;
  });
}

// KEY=VALUE; throws rocehil::Error (bad input) naming the argument. The value is checked with the
// testbed's options (with_switch_settings), which say whether it has lossless switches.
std::pair<std::string, std::string> parse_setting(const std::string& argument) {
  const auto equals = argument.find('=');
  if (equals == std::string::npos || equals == 0)
    throw input_error(
        fmt::format("'{}' is not KEY=VALUE; for example switch.uplink_mbps=200", argument));
  return {argument.substr(0, equals), argument.substr(equals + 1)};
}

// `testbed settings` and `testbed set`: the switches' settings of a running testbed, as the
// kernel and the lossless switches' configurations hold them.
void add_settings_commands(CLI::App* testbed, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* settings = testbed->add_subcommand(
      "settings",
      "The switch settings in force in a running testbed, read from its namespaces' nftables "
      "rules and tbf qdiscs (and a --lossless testbed's switch configurations), as KEY=VALUE");
  settings->add_option("--dir", *dir, "The testbed's directory, as given to 'testbed up'")
      ->required();
  settings->add_flag("--json", *json, "Print JSON (schema_version 1) instead of text");
  settings->footer(R"(
Example, on a testbed brought up with the defaults:
  rocehil testbed settings --dir /tmp/tb
  switch.ecn_mark_mbps=300
  switch.uplink_mbps=400
  switch.host_mbps=1000
0 is an unshaped link; a testbed brought up with --no-ecn has no switch.ecn_mark_mbps. On one
brought up with --lossless there is no switch.ecn_mark_mbps (its switches mark by queue depth):
the rates and the nine knobs (switch.ecn_enable, switch.pfc_priorities, switch.wred_*,
switch.xoff_kb, switch.dscp_to_tc, switch.pfc_watchdog_*) are read from every switch's
configuration, DIR/switchd/NETNS.json, and the hosts' tbf. It exits 3 naming the namespace and
port (or the switch and its file) when they disagree. Change them with 'rocehil testbed set'.)");
  settings->callback([dir, json, &exit_code] {
    const auto in_force = testbed::read_fabric_settings(*dir);
    if (*json) {
      print_json({{"schema_version", 1}, {"settings", in_force}});
    } else {
      for (const auto name : testbed::switch_setting_names())
        if (const auto it = in_force.find(std::string(name)); it != in_force.end())
          fmt::print("{}={}\n", it->first, it->second);
    }
    exit_code = 0;
  });

  auto set_dir = std::make_shared<std::string>();
  auto assignments = std::make_shared<std::vector<std::string>>();
  CLI::App* set = testbed->add_subcommand(
      "set",
      "Change switch settings of a running testbed in every leaf, spine and host namespace they "
      "live in (and every lossless switch), record them in its state, and read them back");
  set->add_option("KEY=VALUE", *assignments,
                  "switch.ecn_mark_mbps (1-100000), switch.uplink_mbps or switch.host_mbps "
                  "(0-100000, 0 unshaped), in Mb/s; on a --lossless testbed also the knobs: "
                  "switch.ecn_enable=0|1, switch.pfc_priorities=3,4|none, switch.wred_kmin_kb, "
                  "switch.wred_kmax_kb, switch.wred_pmax_percent, switch.xoff_kb, "
                  "switch.dscp_to_tc=DSCP:TC,...|default, switch.pfc_watchdog_detection_ms, "
                  "switch.pfc_watchdog_restoration_ms ('rocehil settings list' has their ranges)")
      ->required();
  set->add_option("--dir", *set_dir, "The testbed's directory, as given to 'testbed up'")
      ->required();
  set->footer(R"(
Example: mark CE above 150 Mb/s, shape leaf-spine links at 200 Mb/s, unshape host links:
  rocehil testbed set switch.ecn_mark_mbps=150 switch.uplink_mbps=200 switch.host_mbps=0 \
      --dir /tmp/tb
The ECN rules are replaced in one nftables transaction per switch, the tbf qdiscs with tc.

On a testbed brought up with --lossless, the lossless switches' knobs: PFC's XOFF at 300 KB,
no ECN marks, PFC on priority 3 only:
  rocehil testbed set switch.xoff_kb=300 switch.ecn_enable=0 switch.pfc_priorities=3 \
      --dir /tmp/tb
Each switch's configuration (DIR/switchd/NETNS.json) is written again and its forwarding process
reads it on SIGHUP ("knobs read again" in its log); switch.uplink_mbps and switch.host_mbps
change its ports' pacing and the hosts' tbf. The knobs are checked together, so a WRED kmin
above the old kmax goes with its new kmax in one command. switch.ecn_mark_mbps is refused
there (marking is by queue depth), and a knob on a testbed without --lossless.

Every value is checked before anything changes (exit 2 naming the setting); it exits 3 with
"KEY: wanted X, found Y" when what is read back is not what was set.)");
  set->callback([set_dir, assignments, &exit_code] {
    std::vector<std::pair<std::string, std::string>> wanted;
    for (const auto& a : *assignments) wanted.push_back(parse_setting(a));
    const auto set_to = testbed::apply_fabric_settings(*set_dir, wanted);
    const auto in_force = testbed::read_fabric_settings(*set_dir);
    std::vector<std::string> wrong;
    for (const auto name : testbed::switch_setting_names()) {
      const auto it = set_to.find(std::string(name));
      if (it == set_to.end()) continue;
      const auto& [key, value] = *it;
      const auto found = in_force.find(key);
      const std::string text = found == in_force.end() ? "nothing" : found->second;
      if (text != value)
        wrong.push_back(fmt::format("{}: wanted {}, found {}", key, value, text));
      else
        fmt::print("{}={}\n", key, text);
    }
    if (!wrong.empty())
      throw Error(ExitCode::infrastructure, fmt::format("{}", fmt::join(wrong, "; ")));
    exit_code = 0;
  });
}

}  // namespace

void add_testbed_command(CLI::App& app, int& exit_code) {
  CLI::App* testbed = app.add_subcommand(
      "testbed",
      "A virtual RoCE fabric on this machine (root): hosts, leaves, spines and a capture server "
      "made of network namespaces, with ECMP, shaped links, ECN marking, mirror ports, sshd, "
      "and switches answering SNMP and LLDP.");
  testbed->require_subcommand(1);
  testbed->footer(R"(
Rehearse a suite or an inventory before touching hardware:
  rocehil testbed up --dir /tmp/tb              4 hosts, 2 racks, 2 spines
  ssh -F /tmp/tb/ssh/config h1 ip -br addr       log in to a host namespace
  rocehil testbed status --dir /tmp/tb --json    what exists, whether each sshd answers
  rocehil testbed settings --dir /tmp/tb         ECN and shaping rates in force ('set' them)
  rocehil testbed down --dir /tmp/tb             remove everything it made
  rocehil testbed up --dir /tmp/vm --vm --hosts 2   hosts as QEMU guests with soft-RoCE

Addresses come only from 198.18.0.0/15: RoCEv2 traffic on 198.18.0.0/16 (rack r's hosts are
198.18.r.11, .12, ...), management (ssh to hosts, SNMP to switches) on a 198.19.K.0/23 bridged
to this machine.)");

  auto up_opts = std::make_shared<testbed::TestbedOptions>();
  auto up_common = std::make_shared<CommonOptions>();
  CLI::App* up = testbed->add_subcommand("up", "Build the fabric and write DIR/inventory.yaml");
  add_common(up, *up_common, true);
  up->footer(R"(
Remote mirrors, as a collector on a real fabric receives them:
  rocehil testbed up --dir /tmp/tb --mirror-mode erspan --mirror-truncate 128
  ip netns exec rocehil-ID-cap tshark -i ID-mgmt -f 'ip proto 47' \
      -T fields -e ip.src -e erspan.spanid -e gre.sequence_number -e erspan.timestamp
Spine s sends session s from its management address 198.19.(K+1).(200+s) to the capture
namespace's, 198.19.K.2; the inventory's capture points say so (remote: session, source).

Routing as AI fabrics route (FRR's zebra, bgpd and bfdd in every leaf and spine):
  rocehil testbed up --dir /tmp/tb --routing bgp
  rocehil testbed status --dir /tmp/tb                 sessions, BFD, each rack's next hops
  rocehil testbed link l1-s1 down --dir /tmp/tb        BFD ends the session, l1 routes via s2
  vtysh --vty_socket /run/rocehil/rocehil-ID-l1.frr -c 'show bgp summary'
Spines are AS 65000, leaf r AS 65100+r; one eBGP session per uplink over its own addresses,
each leaf announcing 198.18.r.0/24, ECMP over every spine. up returns once every session is
Established and every leaf reaches every rack over every spine.

A lossless fabric (per-class queues, WRED/ECN by queue depth, PFC, the PFC watchdog), with the
hosts' DSCP 26 (rocehil's default traffic_class 106) on lossless class 3:
  rocehil testbed up --dir /tmp/tb --lossless --switch switch.dscp_to_tc=26:3
  rocehil testbed status --dir /tmp/tb                 PFC, ECN marks, drops per switch
  rocehil testbed set switch.ecn_enable=0 --dir /tmp/tb    PFC alone, on the running fabric
Each switch's counters: /run/rocehil/rocehil-ID-SWITCH.counters (status --json shows them);
docs/rehearsal.md, "A lossless fabric", says what it models and where it differs.)");
  up->add_option("--hosts", up_opts->hosts, "Host namespaces (h1, h2, ...)")->capture_default_str();
  up->add_option("--racks", up_opts->racks, "Racks, one leaf router each; hosts spread evenly")
      ->capture_default_str();
  up->add_option("--spines", up_opts->spines, "Spine routers joining every leaf")
      ->capture_default_str();
  up->add_option("--host-mbps", up_opts->host_mbps,
                 "tbf rate of host-leaf links in Mb/s, both directions (0: unshaped)")
      ->capture_default_str();
  up->add_option("--uplink-mbps", up_opts->uplink_mbps,
                 "tbf rate of leaf-spine links in Mb/s, both directions (0: unshaped); below the "
                 "hosts' total so spine links are the bottleneck")
      ->capture_default_str();
  up->add_option("--ecn-mark-mbps", up_opts->ecn_mark_mbps,
                 "Per egress port of leaves and spines: ECN-capable UDP 4791 traffic above this "
                 "rate is marked CE, as a switch queue over its ECN threshold marks")
      ->capture_default_str();
  up->add_flag_callback(
      "--no-ecn", [up_opts] { up_opts->ecn = false; }, "No ECN marking");
  up->add_option("--mtu", up_opts->mtu, "MTU of fabric links in bytes")->capture_default_str();
  up->add_option("--ecmp-seed", up_opts->ecmp_seed,
                 "Multipath hash seed of the leaves and spines: the same seed puts a flow on the "
                 "same spine every run (0: the kernel's random seed)")
      ->capture_default_str();
  up->add_flag("--slurm", up_opts->slurm,
               "Also a Slurm cluster: munged and slurmctld on the management bridge, a slurmd in "
               "every host namespace (with --vm: in every guest, beside a munged of its own) "
               "named as the host; SLURM_CONF=DIR/slurm/slurm.conf");
  up->add_flag("--vm", up_opts->vm.enabled,
               "Hosts are QEMU guests booting Debian 12's kernel, with soft-RoCE (rdma_rxe) on "
               "their NIC: the inventory names the device and provider verbs, so runs go through "
               "real kernel RDMA and libibverbs. Needs qemu-system-x86 and the kernel 'make deps' "
               "caches; the rates default to what emulated guests can send");
  up->add_option("--vm-memory", up_opts->vm.memory_mb,
                 "--vm: MiB of memory per guest (its file system is this machine's, read-only; "
                 "only what it writes uses memory)")
      ->capture_default_str();
  auto vm_accel = std::make_shared<std::string>("auto");
  up->add_option("--vm-accel", *vm_accel,
                 "--vm: kvm (hardware virtualisation), tcg (QEMU's full emulation, about 70 Mb/s "
                 "between two guests) or auto (kvm where the CPU has vmx or svm)")
      ->check(CLI::IsMember({"auto", "kvm", "tcg"}))
      ->capture_default_str();
  auto mirror = std::make_shared<std::string>("spine-to-leaf");
  up->add_option("--mirror", *mirror,
                 "What each spine's mirror interface copies of its leaf links: spine-to-leaf "
                 "(every packet crossing the spine, once), leaf-to-spine, or both")
      ->check(CLI::IsMember({"spine-to-leaf", "leaf-to-spine", "both"}))
      ->capture_default_str();
  auto mirror_mode = std::make_shared<std::string>("local");
  up->add_option("--mirror-mode", *mirror_mode,
                 "How the copies reach the capture namespace: local (a veth per spine, ID-m1, "
                 "ID-m2, ...), or a remote mirror routed over the management network to the "
                 "capture namespace's management interface, as real switches send one: erspan "
                 "(ERSPAN type III, with the switch's timestamps), erspan2 (ERSPAN type II) or "
                 "gre (GRE transparent Ethernet bridging, key = session). Session s is spine s; "
                 "a relay process in each spine encapsulates (this kernel has no GRE module)")
      ->capture_default_str();
  up->add_option("--mirror-truncate", up_opts->mirror_truncate,
                 "Remote mirrors: bytes of each frame kept, ERSPAN's T bit set on a cut copy (real "
                 "sessions often keep 128); 0 keeps as much as one packet on the management "
                 "network holds")
      ->capture_default_str();
  up->add_flag("--lossless", up_opts->lossless,
               "Lossless switches, as a RoCE fabric's: a forwarding process per leaf and spine "
               "with eight queues per port (SONiC's DSCP map), WRED with ECN by queue depth, "
               "strict priority for CNPs and DWRR for the rest, PFC sent past XOFF and obeyed, "
               "and SONiC's PFC watchdog. Knobs: --switch, or 'testbed set' on a running one. "
               "The soft hosts get PFC on the same priorities, trust dscp, and DCQCN's timer "
               "stretched to the fabric's millisecond queues (roce_rp.rpg_time_reset=3000, "
               "rpg_byte_reset=0); 'run --set' changes them for a run. With --vm each guest's "
               "fabric NIC is a process that obeys PFC and holds the guest back instead of "
               "dropping (rocehil testbed guest-nic)");
  auto knobs = std::make_shared<std::vector<std::string>>();
  up->add_option("--switch", *knobs,
                 "--lossless: a knob as KNOB=VALUE (repeat): switch.ecn_enable=0|1, "
                 "switch.pfc_priorities=3,4 (empty: none), switch.wred_kmin_kb, "
                 "switch.wred_kmax_kb, switch.wred_pmax_percent, switch.xoff_kb, "
                 "switch.dscp_to_tc=DSCP:TC,..., switch.pfc_watchdog_detection_ms (0: off), "
                 "switch.pfc_watchdog_restoration_ms");
  auto routing = std::make_shared<std::string>("static");
  up->add_option("--routing", *routing,
                 "How the switches route: static (routes written once; a link taken down "
                 "blackholes traffic at its far end) or bgp (FRR in every switch: eBGP on every "
                 "leaf-spine link, RFC 7938 style, ECMP over the spines, BFD on every session, "
                 "so a dead link is routed around; needs Debian's frr)")
      ->check(CLI::IsMember({"static", "bgp"}))
      ->capture_default_str();
  up->add_option("--bfd-interval-ms", up_opts->bfd.interval_ms,
                 "--routing bgp: ms between BFD packets on each session, sent and required")
      ->capture_default_str();
  up->add_option("--bfd-multiplier", up_opts->bfd.multiplier,
                 "--routing bgp: BFD packets missed in a row before a session is down (with the "
                 "interval: the detection time)")
      ->capture_default_str();
  up->callback([up, up_opts, up_common, mirror, mirror_mode, vm_accel, routing, knobs, &exit_code] {
    up_opts->routing = testbed::parse_routing(*routing);
    if (!knobs->empty() && !up_opts->lossless)
      throw input_error("--switch sets a knob of the lossless switches: add --lossless");
    // Without ECN a lossless switch marks nothing: PFC alone holds the queues.
    if (up_opts->lossless && !up_opts->ecn) up_opts->knobs.ecn_enable = false;
    for (const auto& assignment : *knobs) {
      const auto equals = assignment.find('=');
      if (equals == std::string::npos)
        throw input_error(
            fmt::format("--switch {}: write KNOB=VALUE, e.g. switch.xoff_kb=300", assignment));
      up_opts->knobs = testbed::with_knob(up_opts->knobs, assignment.substr(0, equals),
                                          assignment.substr(equals + 1));
    }
    up_opts->vm.accel = testbed::parse_guest_accel(*vm_accel);
    // Emulated guests send far less than namespaces: rates not given are scaled to them.
    if (up_opts->vm.enabled) {
      if (up->count("--host-mbps") == 0) up_opts->host_mbps = testbed::vm_host_mbps;
      if (up->count("--uplink-mbps") == 0) up_opts->uplink_mbps = testbed::vm_uplink_mbps;
      if (up->count("--ecn-mark-mbps") == 0) up_opts->ecn_mark_mbps = testbed::vm_ecn_mark_mbps;
    }
    for (auto d : {testbed::MirrorDirection::spine_to_leaf, testbed::MirrorDirection::leaf_to_spine,
                   testbed::MirrorDirection::both})
      if (testbed::to_string(d) == *mirror) up_opts->mirror = d;
    up_opts->mirror_mode = testbed::parse_mirror_mode(*mirror_mode);
    up_opts->dir = up_common->dir;
    up_opts->id = up_common->id;
    // Hosts run this very binary as their agent: the namespaces see this machine's files.
    std::error_code ec;
    up_opts->agent = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    const auto result = testbed::up(*up_opts, reporter(*up_common));
    // --vm guests run rxe (no DCQCN; their NICs are not the soft provider's): only soft hosts.
    std::vector<std::pair<std::string, std::string>> host_settings;
    if (up_opts->lossless && !up_opts->vm.enabled)
      host_settings = write_lossless_host_settings(result.topology, up_opts->knobs.pfc_priorities,
                                                   std::string(settings::soft_nic_dir));
    if (up_common->json) {
      nlohmann::json j = testbed::up_json(result);
      for (const auto& [name, value] : host_settings) j["host_settings"][name] = value;
      print_json(j);
    } else {
      fmt::print("{}", render_up_text(result));
      if (!host_settings.empty()) {
        std::string values;
        for (const auto& [name, value] : host_settings)
          values += fmt::format(" {}={}", name, value);
        fmt::print(
            "hosts' soft NICs set for the lossless fabric:{} (`rocehil run --set` changes "
            "them for a run)\n",
            values);
      }
    }
    exit_code = 0;
  });

  auto down_common = std::make_shared<CommonOptions>();
  CLI::App* down = testbed->add_subcommand(
      "down",
      "Remove every namespace, link, nftables table and process of the testbed; safe to run "
      "twice or after a half-finished up");
  add_common(down, *down_common, false);
  down->callback([down_common, &exit_code] {
    const auto result = testbed::down(down_common->dir, down_common->id, reporter(*down_common));
    const DiscardedSettings discarded = discard_testbed_settings(
        result.id, std::string(settings::default_journal_dir), std::string(settings::soft_nic_dir));
    if (down_common->json) {
      nlohmann::json j = testbed::down_json(result);
      j["settings_journals_discarded"] = discarded.journals;
      j["soft_nics_discarded"] = discarded.soft_netdevs;
      print_json(j);
    } else {
      fmt::print(
          "testbed {} is down in {:.1f} s: {} namespaces removed, {} processes stopped, {} "
          "root-namespace links removed\n",
          result.id, result.seconds, result.namespaces.size(), result.processes,
          result.links.size());
      if (discarded.journals > 0)
        fmt::print("{} settings journal{} of the testbed discarded: nothing is left to put back\n",
                   discarded.journals, discarded.journals == 1 ? "" : "s");
    }
    exit_code = 0;
  });

  auto status_common = std::make_shared<CommonOptions>();
  CLI::App* status = testbed->add_subcommand(
      "status",
      "What exists of the testbed and whether each sshd and snmpd answers and each lldpd runs; "
      "with --routing bgp each switch's BGP sessions (state, uptime, prefixes, BFD) and routes "
      "to the racks; with --lossless each switch's forwarding counters (PFC, ECN, drops, "
      "watchdog storms); exit 0 when all of it is up and healthy, 3 otherwise");
  add_common(status, *status_common, false);
  status->footer(R"(
A lossless testbed (up --lossless): a line per switch from the counters its forwarding process
keeps in /run/rocehil/rocehil-ID-SWITCH.counters, and with --json every port's 8 queues (packets,
drops, ECN marks, peak depth) and 8 priorities (PFC sent and received, time paused, lossless
drops, watchdog storms):
  rocehil testbed status --dir /tmp/tb
  ...
  lossless switches (status --json: every port, queue and priority)
    l1       forwarded 91234; PFC sent 42, received 0; ECN marked 310; drops 0 (queues) + 0 (no
             route, unresolved, TTL); lossless drops 0; PFC storms 0
  rocehil testbed status --dir /tmp/tb --json | jq '.namespaces[] | select(.dataplane)
      | {name, pfc: [.dataplane.ports[].priorities[3].pfc_sent]}'
A lossless drop is a defect (XOFF came too late for the headroom); a switch whose file cannot be
read shows NO COUNTERS and why, and status exits 3.)");
  status->callback([status_common, &exit_code] {
    const auto result = testbed::status(status_common->dir, status_common->id);
    if (status_common->json)
      print_json(testbed::status_json(result));
    else
      fmt::print("{}", render_status_text(result));
    exit_code = result.healthy() ? 0 : static_cast<int>(ExitCode::infrastructure);
  });

  add_settings_commands(testbed, exit_code);
  add_testbed_link_command(testbed, exit_code);
  add_snmp_counters_command(testbed, exit_code);
  add_mirror_relay_command(testbed, exit_code);
  add_dataplane_commands(testbed, exit_code);
}

}  // namespace rocehil::cli
