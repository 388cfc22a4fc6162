#include "rocehil/testbed/snmp_files.hpp"

#include <fmt/format.h>

#include "rocehil/testbed/snmp_pass.hpp"

namespace rocehil::testbed {

std::string snmpd_conf(const Namespace& ns, const Topology& t, const TestbedPaths& paths,
                       const SnmpSecrets& secrets, const std::string& rocehil) {
  std::string out = fmt::format(
      "# Written by 'rocehil testbed up': the SNMP agent of {role} {name} (namespace {netns}).\n"
      "# Its own state directory: agents sharing /var/lib/snmp would overwrite each other.\n"
      "[snmp] persistentDir {state}\n"
      "agentaddress udp:{address}:161,udp:127.0.0.1:161\n"
      "sysName {name}\n"
      "rocommunity {community} {mgmt_prefix}\n"
      "# Only from inside the namespace, only the agent's cache settings: `up` turns the\n"
      "# interface table's cache off, so every request reads the kernel's counters.\n"
      "rwcommunity {community}-cache 127.0.0.1 {cache_table}\n"
      "# IF-MIB ifAdminStatus and nothing else, from the management network: `rocehil switches\n"
      "# port` takes a port down or up as on a switch that has no link_down command.\n"
      "rwcommunity {write_community} {mgmt_prefix} {admin_status}\n"
      "createUser {user} SHA \"{auth}\" AES \"{priv}\"\n"
      "rouser {user} priv\n"
      "# lldpd registers LLDP-MIB here.\n"
      "master agentx\n"
      "agentXSocket {agentx}\n"
      "dontLogTCPWrappersConnects yes\n"
      "# Counters Linux does not keep for a veth, under the MIBs SONiC serves them.\n",
      fmt::arg("role", to_string(ns.role)), fmt::arg("name", ns.name), fmt::arg("netns", ns.netns),
      fmt::arg("state", paths.snmpd_persistent_dir(ns)), fmt::arg("address", ns.mgmt_address),
      fmt::arg("community", secrets.community), fmt::arg("mgmt_prefix", t.mgmt_prefix),
      fmt::arg("cache_table", format_oid(ns_cache_timeout_oid)), fmt::arg("user", secrets.v3_user),
      fmt::arg("auth", secrets.v3_auth_key), fmt::arg("priv", secrets.v3_priv_key),
      fmt::arg("agentx", paths.agentx_socket(ns)),
      fmt::arg("write_community", secrets.write_community),
      fmt::arg("admin_status", format_oid(if_admin_status_oid)));
  for (auto mib : {CounterMib::pfc, CounterMib::qos})
    out += fmt::format("pass_persist {} {} testbed snmp-counters --netns {} --mib {}\n",
                       format_oid(mib_root(mib)), rocehil, ns.netns, to_string(mib));
  return out;
}

std::vector<std::string> cache_off_argv(const Namespace& ns, const SnmpSecrets& secrets) {
  // NET-SNMP-AGENT-MIB nsCacheTimeout of ifTable (whose cache ifXTable shares): 0 seconds.
  return {"ip",
          "netns",
          "exec",
          ns.netns,
          "snmpset",
          "-v2c",
          "-c",
          secrets.community + "-cache",
          "-t",
          "1",
          "-r",
          "2",
          "-On",
          "127.0.0.1",
          format_oid(ns_cache_timeout_oid) + ".1.3.6.1.2.1.2.2",
          "i",
          "0"};
}

std::vector<std::string> snmpd_argv(const Namespace& ns, const TestbedPaths& paths) {
  // -C: no /etc/snmp; -m '': no MIB files (Debian ships none, and each missing one is a line in
  // the log); -u root: the counters handler runs nft and tc.
  return {"ip",    "netns",
          "exec",  ns.netns,
          "snmpd", "-C",
          "-c",    paths.snmpd_conf(ns),
          "-m",    "",
          "-p",    paths.snmpd_pid(ns),
          "-Lf",   paths.snmpd_log(ns),
          "-u",    "root"};
}

}  // namespace rocehil::testbed
