#include "rocehil/testbed/ssh_files.hpp"

#include <gtest/gtest.h>

namespace rocehil::testbed {
namespace {

struct SshFabric {
  TestbedOptions o;
  Topology t;
  TestbedPaths paths{"/srv/tb"};
  SshFabric() {
    o.dir = "/srv/tb";
    o.id = "t1";
    o.hosts = 2;
    o.racks = 1;
    t = build_topology(o, 4);
  }
};

TEST(SshFiles, SshdListensOnItsManagementAddressWithKeysOnly) {
  SshFabric f;
  const std::string config = sshd_config(*f.t.find("h2"), f.paths);
  EXPECT_NE(config.find("ListenAddress 198.19.4.12:22\n"), std::string::npos);
  EXPECT_NE(config.find("PasswordAuthentication no\n"), std::string::npos);
  EXPECT_NE(config.find("KbdInteractiveAuthentication no\n"), std::string::npos);
  EXPECT_NE(config.find("HostKey /srv/tb/ssh/rocehil-t1-h2.host_key\n"), std::string::npos);
  EXPECT_NE(config.find("AuthorizedKeysFile /srv/tb/ssh/authorized_keys\n"), std::string::npos);
  // Sessions start below a shell level, so bash leaves root's ~/.bashrc alone.
  EXPECT_NE(config.find("SetEnv SHLVL=1\n"), std::string::npos);
  EXPECT_NE(f.paths.sshd_config(*f.t.find("h2")).find("rocehil-t1-h2"), std::string::npos);
}

TEST(SshFiles, ClientConfigNamesEveryHostAndTheCaptureServer) {
  SshFabric f;
  const std::string config = ssh_client_config(f.t, f.paths);
  // Switches have a management address too, but no sshd.
  EXPECT_EQ(config.find("Host l1"), std::string::npos);
  EXPECT_EQ(config.find("Host s1"), std::string::npos);
  EXPECT_NE(config.find("Host h1 h2 cap\n"), std::string::npos) << config;
  EXPECT_NE(config.find("Host h1\n  HostName 198.19.4.11\n"), std::string::npos);
  EXPECT_NE(config.find("Host cap\n  HostName 198.19.4.2\n"), std::string::npos);
  EXPECT_NE(config.find("StrictHostKeyChecking yes"), std::string::npos);
  EXPECT_NE(config.find("IdentityFile /srv/tb/ssh/id_ed25519"), std::string::npos);
}

TEST(SshFiles, KnownHostsDropsTheKeyComment) {
  SshFabric f;
  const std::string lines =
      known_hosts(f.t, {{"h1", "ssh-ed25519 AAAAC3Nza1 rocehil-t1-h1\n"},
                        {"cap", "ssh-ed25519 AAAAC3Nzb2\n"},
                        {"l1", "ssh-ed25519 AAAAC3Nzc3\n"}});  // a switch's key would not be listed
  EXPECT_EQ(lines,
            "h1,198.19.4.11 ssh-ed25519 AAAAC3Nza1\ncap,198.19.4.2 ssh-ed25519 AAAAC3Nzb2\n");
}

}  // namespace
}  // namespace rocehil::testbed
