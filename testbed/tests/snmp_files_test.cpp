#include "rocehil/testbed/snmp_files.hpp"

#include <gtest/gtest.h>

#include "has_line.hpp"

namespace rocehil::testbed {
namespace {

struct SnmpFabric {
  TestbedOptions o;
  Topology t;
  TestbedPaths paths{"/srv/tb"};
  SnmpSecrets secrets{"c0mmunity", "rocehil", "authkey123", "privkey456", "wr1te"};
  SnmpFabric() {
    o.dir = "/srv/tb";
    o.id = "t1";
    t = build_topology(o, 4);
  }
};

using testing::has_line;

TEST(SnmpFiles, SnmpdListensOnTheManagementAddressForTheManagementNetwork) {
  SnmpFabric f;
  const Namespace& l2 = *f.t.find("l2");
  const std::string conf = snmpd_conf(l2, f.t, f.paths, f.secrets, "/usr/bin/rocehil");
  EXPECT_TRUE(has_line(conf, "agentaddress udp:198.19.5.102:161,udp:127.0.0.1:161")) << conf;
  EXPECT_TRUE(has_line(conf, "rocommunity c0mmunity 198.19.4.0/23"));
  // Writable only from the namespace's own loopback, and only the agent's cache settings.
  EXPECT_TRUE(has_line(conf, "rwcommunity c0mmunity-cache 127.0.0.1 .1.3.6.1.4.1.8072.1.5.3.1.2"));
  EXPECT_EQ(cache_off_argv(l2, f.secrets).back(), "0");
  // The write community: from the management network, IF-MIB ifAdminStatus alone.
  EXPECT_TRUE(has_line(conf, "rwcommunity wr1te 198.19.4.0/23 .1.3.6.1.2.1.2.2.1.7")) << conf;
  EXPECT_TRUE(has_line(conf, "sysName l2"));
  EXPECT_TRUE(has_line(conf, "createUser rocehil SHA \"authkey123\" AES \"privkey456\""));
  EXPECT_TRUE(has_line(conf, "rouser rocehil priv"));
  EXPECT_TRUE(has_line(conf, "master agentx"));
  EXPECT_TRUE(has_line(conf, "agentXSocket /run/rocehil/rocehil-t1-l2.agentx"));
  EXPECT_TRUE(has_line(conf, "[snmp] persistentDir /srv/tb/snmp/rocehil-t1-l2.state"));
  EXPECT_TRUE(has_line(conf,
                       "pass_persist .1.3.6.1.4.1.9.9.813 /usr/bin/rocehil testbed snmp-counters "
                       "--netns rocehil-t1-l2 --mib pfc"));
  EXPECT_TRUE(has_line(conf,
                       "pass_persist .1.3.6.1.4.1.9.9.580.1.5.5 /usr/bin/rocehil testbed "
                       "snmp-counters --netns rocehil-t1-l2 --mib qos"));
}

TEST(SnmpFiles, EveryPathOnTheCommandLineNamesTheNamespace) {
  SnmpFabric f;
  const Namespace& s1 = *f.t.find("s1");
  const auto argv = snmpd_argv(s1, f.paths);
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(argv[3], "rocehil-t1-s1");
  EXPECT_EQ(argv[4], "snmpd");
  for (const auto& a : argv) {
    if (a.starts_with("/")) {
      EXPECT_NE(a.find("rocehil-t1-s1"), std::string::npos) << a;
    }
  }
  EXPECT_EQ(f.paths.snmpd_pid(s1), "/srv/tb/snmp/rocehil-t1-s1.snmpd.pid");
  EXPECT_EQ(f.paths.lldpd_socket(s1), "/run/rocehil/rocehil-t1-s1.lldpd.socket");
  EXPECT_EQ(f.paths.lldpd_conf(s1), "/run/rocehil/rocehil-t1-s1.lldpd.conf");
}

}  // namespace
}  // namespace rocehil::testbed
