#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/lldp_files.hpp"
#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/relay_counters.hpp"
#include "rocehil/testbed/routing_status.hpp"
#include "rocehil/testbed/shared_counters.hpp"
#include "rocehil/testbed/ssh_files.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// Called with a short line as each step of `up` or `down` starts.
using StepReporter = std::function<void(std::string_view)>;

struct UpResult {
  Topology topology;
  TestbedPaths paths;
  double seconds = 0;
  std::optional<std::string> slurm_conf;  // --slurm: the SLURM_CONF its clients use
};

// Builds the fabric. Needs root and the tools (one-line error, exit 2, otherwise). When a step
// fails, whatever was made is removed again before the error is thrown.
UpResult up(TestbedOptions options, const StepReporter& report);

struct DownResult {
  std::string id;
  std::vector<std::string> namespaces;  // removed
  std::vector<std::string> links;       // removed from the root namespace
  int processes = 0;                    // signalled
  double seconds = 0;
};

// Removes every namespace, root-namespace link and process carrying the testbed's id. Safe to run
// twice and after a half-finished `up`. `id` empty: the id in DIR/testbed.json, else the one
// derived from `dir`.
DownResult down(const std::string& dir, const std::string& id, const StepReporter& report);

struct InterfaceStatus {
  std::string name;
  std::string link;            // the topology's link name
  std::string peer_namespace;  // the other end; "root" for the management bridge
  std::string peer_interface;
  bool exists = false;
  std::string operstate;
  int mtu = 0;
  std::vector<std::string> addresses;  // "198.18.1.11/32"
  int mbps = 0;
  std::uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0;
  std::optional<MirrorSession> mirror;  // set on capture interfaces
};

// A spine's remote mirror relay, as its pid file and counters file tell.
struct RelayStatus {
  std::string spine;
  std::string netns;
  RemoteMirror session;
  bool running = false;
  int pid = 0;                            // from the pid file, 0 without one
  std::string detail;                     // why it is not running
  std::optional<RelayCounters> counters;  // as it last wrote them
};

// A host's QEMU guest (--vm): whether it runs and what its console last said.
struct GuestStatus {
  bool running = false;
  int pid = 0;            // from QEMU's pid file, 0 without one
  std::string state;      // ready, booting, failed, stopped
  std::string detail;     // the console's ready line, why it failed, or why it is stopped
  long resident_kib = 0;  // QEMU's resident memory, 0 when it does not run
  std::string console;    // the serial console's file
};

// A lossless switch's forwarding process (--lossless), as the counters file it keeps says.
struct DataplaneStatus {
  std::string counters_file;  // dataplane::shared_counters_path
  // Every port's counters; absent (never zeros) when the file could not be read.
  std::optional<std::vector<dataplane::PortSnapshot>> ports;
  std::string problem;  // why they are absent
};

struct NamespaceStatus {
  Namespace spec;
  bool exists = false;
  std::optional<bool> sshd_answers;   // hosts and the capture namespace
  std::string sshd_detail;            // the banner, or why there is none
  std::optional<bool> snmpd_answers;  // switches: a GET of sysName on the mgmt address
  std::string snmpd_detail;           // "sysName l1", or why there is no answer
  std::optional<bool> lldpd_runs;     // hosts and switches: lldpcli reaches it
  std::string lldpd_detail;           // "3 neighbours", or why it cannot be asked
  std::vector<LldpNeighbor> lldp_neighbors;
  std::optional<std::string> slurm_state;    // --slurm: sinfo's state of its node ("idle")
  std::optional<GuestStatus> guest;          // --vm: hosts
  std::optional<SwitchRouting> routing;      // --routing bgp: switches, as their vtysh says
  std::optional<DataplaneStatus> dataplane;  // --lossless: switches, and --vm guests' NICs
  std::vector<InterfaceStatus> interfaces;
};

struct StatusResult {
  std::string id;
  std::string dir;
  std::string phase;  // from the state file: building, up, down; "none" without one
  Topology topology;  // what the state file describes (empty without one)
  std::vector<NamespaceStatus> namespaces;
  std::vector<std::string> stray_namespaces;  // carry the id but are not in the topology
  bool bridge_exists = false;
  MirrorMode mirror_mode = MirrorMode::local;
  std::vector<RelayStatus> relays;  // remote mirror modes: one per spine
  bool slurm = false;               // brought up with --slurm
  std::string slurm_conf;           // --slurm: the SLURM_CONF clients use
  std::string slurm_problem;        // --slurm: why sinfo could not tell
  Routing routing = Routing::static_routes;
  BfdTimers bfd{};        // --routing bgp
  bool lossless = false;  // brought up with --lossless
  // Every namespace and interface exists, every sshd and snmpd answers, every lldpd and mirror
  // relay runs, with --slurm every node is known to slurmctld and responding (idle, allocated
  // or drained) and, with --routing bgp, every switch's sessions are Established and its routes
  // to the racks use every path; with --lossless, every switch's counters file can be read (its
  // forwarding process made it).
  bool healthy() const;
};

StatusResult status(const std::string& dir, const std::string& id);

}  // namespace rocehil::testbed
