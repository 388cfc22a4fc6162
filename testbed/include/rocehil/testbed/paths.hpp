#pragma once

#include <string>
#include <string_view>

#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// Where a testbed keeps its files, all under its directory. Every file a daemon is started with
// carries the namespace's name (and so the testbed id), so its command line says whose it is.
struct TestbedPaths {
  std::string dir;
  std::string state() const { return dir + "/testbed.json"; }
  std::string inventory() const { return dir + "/inventory.yaml"; }
  std::string ssh_dir() const { return dir + "/ssh"; }
  std::string run_dir() const { return dir + "/run"; }
  std::string identity() const { return ssh_dir() + "/id_ed25519"; }
  std::string authorized_keys() const { return ssh_dir() + "/authorized_keys"; }
  std::string known_hosts() const { return ssh_dir() + "/known_hosts"; }
  std::string ssh_config() const { return ssh_dir() + "/config"; }
  std::string host_key(const Namespace& ns) const {
    return ssh_dir() + "/" + ns.netns + ".host_key";
  }
  std::string sshd_config(const Namespace& ns) const {
    return ssh_dir() + "/" + ns.netns + ".sshd_config";
  }
  std::string sshd_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".sshd.pid";
  }
  std::string sshd_log(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".sshd.log";
  }

  // Hosts as QEMU guests (--vm, guests.hpp): the initramfs and the stage-2 script every guest
  // boots with, each guest's settings (the kernel command line names them), and its serial
  // console and QEMU's pid. The guests read these through their 9p view of this machine's /.
  std::string vm_dir() const { return dir + "/vm"; }
  std::string initramfs() const { return vm_dir() + "/initrd.img"; }
  std::string guest_stage2() const { return vm_dir() + "/stage2.sh"; }
  std::string guest_settings(const Namespace& ns) const {
    return vm_dir() + "/" + ns.netns + ".conf";
  }
  std::string guest_console(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".console.log";
  }
  std::string qemu_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".qemu.pid";
  }

  // A --vm --lossless guest's NIC process (guest_nic.hpp): its configuration, pid and log, and
  // the unix socket QEMU's -netdev stream connects to, in public_run_dir() (a socket's path is
  // 107 characters at most; the socket itself is root's only).
  std::string guest_nic_config(const Namespace& ns) const {
    return vm_dir() + "/" + ns.netns + ".nic.json";
  }
  std::string guest_nic_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".guest-nic.pid";
  }
  std::string guest_nic_log(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".guest-nic.log";
  }
  static std::string guest_nic_socket(const Namespace& ns) {
    return public_run_dir() + "/" + ns.netns + ".nic.sock";
  }

  // A spine's remote mirror relay (mirror_relay.hpp): its pid, and the counters it rewrites
  // every second.
  std::string relay_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".mirror-relay.pid";
  }
  std::string relay_counters(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".mirror-relay.json";
  }

  // A --lossless switch's forwarding process (switchd.hpp): its ports and knobs, pid and log.
  std::string switchd_dir() const { return dir + "/switchd"; }
  std::string switchd_config(const Namespace& ns) const {
    return switchd_dir() + "/" + ns.netns + ".json";
  }
  std::string switchd_pid(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".switchd.pid";
  }
  std::string switchd_log(const Namespace& ns) const {
    return run_dir() + "/" + ns.netns + ".switchd.log";
  }

  // The switches' SNMP agents and every namespace's lldpd (snmp_files.hpp, lldp_files.hpp). The
  // secrets are generated at the first `up` and kept across down/up, like the ssh keys.
  std::string snmp_dir() const { return dir + "/snmp"; }
  std::string snmp_community() const { return snmp_dir() + "/community"; }
  std::string snmp_write_community() const { return snmp_dir() + "/write_community"; }
  std::string snmp_v3_user() const { return snmp_dir() + "/v3_user"; }
  std::string snmp_v3_auth_key() const { return snmp_dir() + "/v3_auth_key"; }
  std::string snmp_v3_priv_key() const { return snmp_dir() + "/v3_priv_key"; }
  std::string snmpd_conf(const Namespace& ns) const { return snmp_file(ns, "snmpd.conf"); }
  std::string snmpd_pid(const Namespace& ns) const { return snmp_file(ns, "snmpd.pid"); }
  std::string snmpd_log(const Namespace& ns) const { return snmp_file(ns, "snmpd.log"); }
  // snmpd's engine id, boots and localized users: one directory per agent, never the
  // machine's /var/lib/snmp, which several agents would overwrite.
  std::string snmpd_persistent_dir(const Namespace& ns) const { return snmp_file(ns, "state"); }
  // lldpd's files and the sockets live in public_run_dir(): Debian's lldpcli is setuid _lldpd,
  // so lldpd's socket and the configuration lldpd has lldpcli read must be reachable by that
  // user, which a private --dir (mkdtemp's 0700) is not; and a unix socket's path is 107
  // characters at most, which a deep --dir would exceed. Nothing secret goes there.
  static std::string public_run_dir() { return "/run/rocehil"; }

  // A switch's FRR daemons (--routing bgp, frr_files.hpp): one configuration file per daemon,
  // its pid file and log beside sshd's. Their sockets (zebra's zserv.api, each daemon's vty
  // socket, bfdd's control socket) go in a directory of their own in public_run_dir(), named
  // for the namespace, root's only: a unix socket's path is 107 characters at most, which a
  // deep --dir would exceed.
  std::string frr_dir() const { return dir + "/frr"; }
  std::string frr_conf(const Namespace& ns, std::string_view daemon) const {
    return frr_dir() + "/" + ns.netns + "." + std::string(daemon) + ".conf";
  }
  std::string frr_pid(const Namespace& ns, std::string_view daemon) const {
    return run_dir() + "/" + ns.netns + "." + std::string(daemon) + ".pid";
  }
  std::string frr_log(const Namespace& ns, std::string_view daemon) const {
    return run_dir() + "/" + ns.netns + "." + std::string(daemon) + ".log";
  }
  static std::string frr_socket_dir(const Namespace& ns) { return public_file(ns, "frr"); }
  std::string lldpd_conf(const Namespace& ns) const { return public_file(ns, "lldpd.conf"); }
  std::string lldpd_socket(const Namespace& ns) const { return public_file(ns, "lldpd.socket"); }
  std::string agentx_socket(const Namespace& ns) const { return public_file(ns, "agentx"); }

 private:
  std::string snmp_file(const Namespace& ns, const char* what) const {
    return snmp_dir() + "/" + ns.netns + "." + what;
  }
  static std::string public_file(const Namespace& ns, const char* what) {
    return public_run_dir() + "/" + ns.netns + "." + what;
  }
};

}  // namespace rocehil::testbed
