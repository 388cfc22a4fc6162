#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/settings/assignment.hpp"

namespace rocehil::inventory {

// Where a value came from in the inventory file, 1-based, for messages that point at it.
struct SourceLocation {
  int line = 0;
  int column = 0;
};

enum class Provider { soft, verbs };
std::string_view to_string(Provider p);

// How the controller starts a program on a host: over ssh (a real host), or as a process of its
// own machine (`local`: the controller's machine is the host; with `netns`, inside that network
// namespace, as a testbed's hosts can be entered).
enum class Launcher { ssh, local, slurm };
std::string_view to_string(Launcher l);
// "ssh", "local" or "slurm"; nullopt for anything else.
std::optional<Launcher> launcher_named(std::string_view name);

// How rocehil reaches a host over ssh. After loading, a host's settings are complete: its own
// values over the file's defaults. Empty or 0 means "ssh's own default".
struct SshSettings {
  std::string user;                  // ssh -l
  int port = 0;                      // ssh -p
  std::string identity;              // ssh -i
  std::string known_hosts;           // -o UserKnownHostsFile=
  std::string jump;                  // ssh -J [user@]host[:port]
  std::vector<std::string> options;  // -o Key=Value, never one that runs a command
  int connect_timeout_s = 10;
};

// One RDMA-capable port (or, for the soft provider, one netdev) of a host.
struct Nic {
  std::string device;  // RDMA device, e.g. mlx5_0; empty for soft-only hosts
  int port = 1;        // RDMA port number
  int gid_index = -1;  // -1: not stated (the verbs provider then looks for the RoCEv2 GID of ip)
  std::string netdev;  // kernel interface, e.g. ens1f0np0
  std::string ip;      // the address RoCE traffic uses
  double link_gbps = 0;
  int numa = -1;  // -1: unknown
  int gpu = -1;   // GPU index paired with this NIC (same PCIe switch); -1: none
  int rail = 0;
  std::string link;  // name of the fabric link it is cabled to, if the inventory lists links
  int mtu = 0;       // expected netdev MTU; 0: not stated
  SourceLocation where;
};

// A command the inventory names for a host or switch (`commands: {drain: "..."}`): a suite's
// `command` event names it, and it runs there, by that machine's shell, as written.
struct NamedCommand {
  std::string name;
  std::string text;
  SourceLocation where;
};

struct Host {
  std::string name;
  std::string address;  // what ssh connects to: IP or DNS name
  SshSettings ssh;
  std::string agent;  // remote path (or PATH name) of the rocehil binary
  Provider provider = Provider::verbs;
  Launcher launcher = Launcher::ssh;
  std::string rack;
  std::vector<std::string> labels;
  std::string netns;  // the testbed's namespace behind this host; informative
  std::vector<Nic> nics;
  // The fabric settings this host is declared to run with (defaults' settings, then its own):
  // `inventory check` lists where the NICs differ. Nothing sets them from here.
  std::vector<settings::Assignment> settings;
  std::vector<NamedCommand> commands;  // `commands:`, for a suite's command events
  SourceLocation where;  // the entry it came from (a range entry gives many hosts one place)
};

// How rocehil reads a switch over SNMP. The secrets (community, v3 keys) are never held here: only
// where to read them, a file or an environment variable, so the inventory, run.json, reports and
// logs can carry these settings without carrying a secret.
struct SnmpSettings {
  enum class Version { v2c, v3 };
  Version version = Version::v2c;
  std::string community_file;  // v2c: one of these two
  std::string community_env;
  // v2c: where the write community is read (at most one of these two), for SET of IF-MIB
  // ifAdminStatus (a link event on a switch without link_down, `rocehil switches port`).
  std::string write_community_file;
  std::string write_community_env;
  std::string user;  // v3: the USM user
  std::string auth;  // v3: "", md5, sha, sha224, sha256, sha384, sha512 ("" = noAuthNoPriv)
  std::string auth_key_file, auth_key_env;
  std::string priv;  // v3: "", des, aes, aes192, aes256 ("" = no privacy)
  std::string priv_key_file, priv_key_env;
  int port = 161;
  int timeout_ms = 1000;  // per request
  int retries = 1;
  // How long after traffic the switch's counters show it: its counter polling interval plus its
  // agent's cache (SONiC polls port counters every 1 s). The after-case poll waits this long.
  int counter_refresh_ms = 0;
  // v3: the user (with its keys) may also SET ifAdminStatus; v3 has no separate write secret.
  bool writable = false;
  SourceLocation where;

  // Whether rocehil may SET on this switch: a v2c write community is named, or v3 `writable`.
  bool can_write() const {
    return version == Version::v2c ? !write_community_file.empty() || !write_community_env.empty()
                                   : writable;
  }
};
std::string_view to_string(SnmpSettings::Version v);

struct Switch {
  std::string name;
  std::string role;  // leaf, spine, superspine, other
  std::string rack;
  std::string address;
  int ports = 0;
  double port_gbps = 0;
  std::string netns;
  std::optional<SnmpSettings> snmp;  // absent: rocehil does not poll this switch
  // How a suite's events reach a switch that is not a testbed's namespace: over ssh to
  // `address` (defaults' ssh, then its own), running `link_down` / `link_up` with {port} replaced
  // by the port, shell-quoted ("sudo config interface shutdown {port}"), and `commands:`.
  SshSettings ssh;
  std::string link_down, link_up;  // empty: links of this switch cannot be taken down
  std::vector<NamedCommand> commands;
  SourceLocation where;
};

// One end of a link: a host or switch name and its port or interface.
struct LinkEnd {
  std::string node;
  std::string port;
};

struct Link {
  std::string name;
  LinkEnd a, b;
  double gbps = 0;
  SourceLocation where;
};

struct Rack {
  std::string name;
  std::string leaf;  // the switch the rack's hosts hang off
  std::vector<std::string> hosts;
  SourceLocation where;
};

// What a capture point's mirror port copies: links (or ports) of one switch, in a direction.
struct Mirror {
  std::string switch_name;
  std::vector<std::string> links;
  std::vector<std::string> ports;
  std::string direction;  // spine-to-leaf, leaf-to-spine, ingress, egress, both
};

// A capture point that receives a switch's remote mirror session (ERSPAN or GRE) rather than a
// local mirror port: the session it takes among those reaching its interface.
struct RemoteMirror {
  std::uint32_t session = 0;  // the ERSPAN session ID (0-1023), or the GRE key of a GRE mirror
  std::string source;         // the switch's tunnel source address; empty: from any switch
};

struct CapturePoint {
  std::string name;
  std::string host;
  std::string backend;                 // pcap or dpdk
  std::string interface;               // pcap: the interface wired to the mirror port
  std::vector<std::string> dpdk_args;  // dpdk: EAL arguments naming the port or vdev
  double link_gbps = 0;
  Mirror mirrors;
  std::optional<RemoteMirror> remote;  // set: a remote mirror session; unset: a local mirror port
  SourceLocation where;
};

// Where a run's agents reach its controller. With it, `rocehil run` starts one agent per host for
// the whole run, which dials home (`rocehil agent --connect`) and serves every case over that one
// connection; without it, each case starts its agents over ssh and speaks to them on stdio.
struct Controller {
  std::string address;         // the controller machine's IPv4 address as the hosts reach it
  int port = 0;                // 0: a free port each run, told to the agents
  std::string listen;          // the address it listens on; empty: `address`
  double join_timeout_s = 60;  // how long every host has to dial in
  // Who starts the agents: rocehil itself over each host's launcher, one run at a time under a
  // key it draws; or others (pdsh, clush, systemd, a DaemonSet), whose agents join under `fleet`
  // with the key in `secret_file` (a path: the inventory never holds a secret).
  bool agents_external = false;
  std::string fleet;        // external: the name they join under (their --run-id)
  std::string secret_file;  // external: the key's file on this machine, mode 0600
  SourceLocation where;
};

struct Defaults {
  SshSettings ssh;
  std::string agent = "rocehil";
  Provider provider = Provider::verbs;
  Launcher launcher = Launcher::ssh;
  double link_gbps = 0;
  int gid_index = -1;
  int port = 1;
  std::optional<SnmpSettings> snmp;            // what a switch without its own `snmp` uses
  std::vector<settings::Assignment> settings;  // what every host is declared to run with
};

struct Inventory {
  int schema_version = 1;
  std::string name;
  std::string file;  // the path it was loaded from, for messages
  Defaults defaults;
  std::vector<Host> hosts;  // ranges expanded, in file order
  std::vector<Rack> racks;
  std::vector<Switch> switches;
  std::vector<Link> links;
  std::vector<CapturePoint> captures;
  std::optional<Controller> controller;

  const Host* find_host(std::string_view name) const;
  const Switch* find_switch(std::string_view name) const;
  const CapturePoint* find_capture(std::string_view name) const;
  const Rack* find_rack(std::string_view name) const;
};

}  // namespace rocehil::inventory
