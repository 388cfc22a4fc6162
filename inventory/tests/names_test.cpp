#include "rocehil/inventory/names.hpp"

#include <gtest/gtest.h>

namespace rocehil::inventory {
namespace {

const char* const hostile[] = {"h1;touch /tmp/x",
                               "$(id)",
                               "`id`",
                               "h1 h2",
                               "h1\nh2",
                               "'h1'",
                               "\"h1\"",
                               "h1|id",
                               "h1&",
                               "h1>x",
                               "-oProxyCommand=x",
                               "",
                               "h1\\",
                               "h1\t"};

TEST(Names, HostileStringsAreNeverNamesAddressesOrUsers) {
  for (const char* s : hostile) {
    EXPECT_FALSE(is_valid_name(s)) << s;
    EXPECT_FALSE(is_valid_address(s)) << s;
    EXPECT_FALSE(is_valid_user(s)) << s;
    EXPECT_FALSE(is_valid_netdev(s)) << s;
    EXPECT_FALSE(is_valid_rdma_device(s)) << s;
    EXPECT_FALSE(is_valid_jump(s)) << s;
    EXPECT_FALSE(is_valid_agent_path(s)) << s;
    EXPECT_FALSE(is_valid_local_path(s)) << s;
  }
}

TEST(Names, ValidNames) {
  for (const char* s : {"h1", "gpu001", "leaf-01", "r1.a", "a_b", "1rack"})
    EXPECT_TRUE(is_valid_name(s)) << s;
  for (const char* s : {"-h1", ".h1", "h/1", "h:1", "h@1"}) EXPECT_FALSE(is_valid_name(s)) << s;
  EXPECT_TRUE(is_valid_name(std::string(63, 'a')));
  EXPECT_FALSE(is_valid_name(std::string(64, 'a')));
}

TEST(Names, Addresses) {
  for (const char* s : {"10.0.0.1", "198.18.1.11", "fe80::1", "2001:db8::2", "gpu001",
                        "gpu001.example.com", "a-b.c"})
    EXPECT_TRUE(is_valid_address(s)) << s;
  for (const char* s :
       {"10.0.0.300", "10.0.0", "1.2.3.4.5", "-gpu", "gpu-", "a..b", "gpu_1", "fe80::1%eth0"})
    EXPECT_FALSE(is_valid_address(s)) << s;
  EXPECT_TRUE(is_ipv4_address("10.1.2.3"));
  EXPECT_FALSE(is_ipv4_address("fe80::1"));
  EXPECT_TRUE(is_ip_address("fe80::1"));
}

TEST(Names, InterfacesDevicesUsers) {
  for (const char* s : {"eth0", "ens1f0np0", "t1-nic0", "bond0.100", "veth@if3"})
    EXPECT_TRUE(is_valid_netdev(s)) << s;
  EXPECT_FALSE(is_valid_netdev("abcdefghijklmnop"));  // 16 characters: over IFNAMSIZ
  EXPECT_FALSE(is_valid_netdev("--help"));
  for (const char* s : {"mlx5_0", "rocep1s0f0", "irdma-1"}) EXPECT_TRUE(is_valid_rdma_device(s));
  for (const char* s : {"root", "svc.rocehil", "a_b-c"}) EXPECT_TRUE(is_valid_user(s));
  EXPECT_FALSE(is_valid_user("-l"));
}

TEST(Names, PathsAndAgent) {
  EXPECT_TRUE(is_valid_local_path("/root/.ssh/id_ed25519"));
  EXPECT_TRUE(is_valid_local_path("~/.ssh/known_hosts"));
  EXPECT_FALSE(is_valid_local_path("relative/key"));
  EXPECT_FALSE(is_valid_local_path("/tmp/a b"));
  EXPECT_TRUE(is_valid_agent_path("/usr/local/bin/rocehil"));
  EXPECT_TRUE(is_valid_agent_path("rocehil"));
  EXPECT_FALSE(is_valid_agent_path("bin/rocehil"));
  EXPECT_FALSE(is_valid_agent_path("~/bin/rocehil"));  // a remote shell would not expand it quoted
}

TEST(Names, JumpHosts) {
  for (const char* s :
       {"bastion", "ops@bastion.example.com", "bastion:2222", "ops@10.0.0.1:22", "fe80::1"})
    EXPECT_TRUE(is_valid_jump(s)) << s;
  for (const char* s : {"bastion:0", "bastion:70000", "bastion:", "@bastion", "a b"})
    EXPECT_FALSE(is_valid_jump(s)) << s;
}

TEST(Names, SshOptions) {
  for (const char* s : {"IdentitiesOnly=yes", "StrictHostKeyChecking=accept-new",
                        "ServerAliveCountMax=3", "Ciphers=aes128-gcm@openssh.com"})
    EXPECT_TRUE(is_valid_ssh_option(s)) << s;
  for (const char* s : {"ProxyCommand=nc %h %p", "proxycommand=nc", "LocalCommand=id",
                        "PermitLocalCommand=yes", "KnownHostsCommand=x", "RemoteCommand=id", "Foo",
                        "=yes", "Foo=", "Foo=a b", "Foo=$(id)", "Foo=a;b", "Fo-o=1"})
    EXPECT_FALSE(is_valid_ssh_option(s)) << s;
}

TEST(Names, DpdkArgs) {
  EXPECT_TRUE(is_valid_dpdk_arg("-a"));
  EXPECT_TRUE(is_valid_dpdk_arg("0000:3b:00.1"));
  EXPECT_TRUE(is_valid_dpdk_arg("--vdev=net_af_packet0,iface=eth1"));
  EXPECT_FALSE(is_valid_dpdk_arg("a b"));
  EXPECT_FALSE(is_valid_dpdk_arg("$(id)"));
}

}  // namespace
}  // namespace rocehil::inventory
