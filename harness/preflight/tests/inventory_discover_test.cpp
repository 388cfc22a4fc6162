#include <gtest/gtest.h>

#include "rocehil/inventory/load.hpp"
#include "rocehil/preflight/inventory_discover.hpp"

namespace rocehil::preflight {
namespace {

TEST(FabricNetdevs, SkipsLoopbackAndTheManagementInterface) {
  const std::string listing =
      "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n"
      "2: t1-mgmt@if7    inet 198.19.4.11/24 brd 198.19.4.255 scope global t1-mgmt\\  valid_lft "
      "forever\n"
      "3: t1-nic0@if9    inet 198.18.1.11/24 brd 198.18.1.255 scope global t1-nic0\\  valid_lft "
      "forever\n"
      "3: t1-nic0@if9    inet 198.18.9.11/24 scope global secondary t1-nic0\n"
      "4: ens1f0np0    inet 10.10.0.1/31 scope global ens1f0np0\n"
      "garbage line\n";
  EXPECT_EQ(fabric_netdevs(listing, "198.19.4.11"),
            (std::vector<std::string>{"t1-nic0", "ens1f0np0"}));
}

NetdevFacts netdev(std::string name, std::string cidr, int mtu, int speed) {
  NetdevFacts n;
  n.name = std::move(name);
  n.addresses = {std::move(cidr)};
  n.mtu = mtu;
  n.speed_mbps = speed;
  n.operstate = "up";
  return n;
}

DiscoveredHost rdma_host() {
  DiscoveredHost h;
  h.target = "gpu001";
  h.reachable = true;
  h.management_ip = "10.1.0.1";
  h.facts.hostname = "gpu001.example.com";
  RdmaDeviceFacts dev;
  dev.name = "mlx5_0";
  dev.netdev = "ens1f0np0";
  RdmaPortFacts port;
  port.port = 1;
  port.state = "ACTIVE";
  port.link_layer = "Ethernet";
  port.gid_table_len = 4;
  port.gids = {{0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", "ens1f0np0"},
               {1, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "RoCE v2", "ens1f0np0"},
               {2, "0000:0000:0000:0000:0000:ffff:0a0a:0001", "IB/RoCE v1", "ens1f0np0"},
               {3, "0000:0000:0000:0000:0000:ffff:0a0a:0001", "RoCE v2", "ens1f0np0"}};
  dev.ports = {port};
  h.facts.rdma = {dev};
  NetdevFacts n = netdev("ens1f0np0", "10.10.0.1/31", 9000, 400000);
  n.numa_node = 1;
  h.facts.netdevs = {n};
  h.facts.nvidia_smi = true;
  h.facts.gpu_nic = {{0, "mlx5_0", "SYS"}, {1, "mlx5_0", "PXB"}};
  return h;
}

DiscoveredHost soft_host() {
  DiscoveredHost h;
  h.target = "198.19.4.12";
  h.reachable = true;
  h.management_ip = "198.19.4.12";
  h.facts.hostname = "h2";
  h.netdevs = {"t1-nic0"};
  h.facts.netdevs = {netdev("t1-nic0", "198.18.1.12/24", 9000, 10000)};
  return h;
}

TEST(InventorySkeleton, RdmaAndSoftHostsLoadAsWritten) {
  DiscoveredHost gone;
  gone.target = "gpu099";
  gone.reason = "ssh: connect to host gpu099 port 22: Connection refused";
  remote::SshOptions ssh;
  ssh.user = "root";
  const std::string yaml = inventory_skeleton({rdma_host(), soft_host(), gone}, ssh);
  const auto loaded = inventory::parse_inventory(yaml, "skeleton.yaml");
  for (const auto& d : loaded.diagnostics) ADD_FAILURE() << inventory::to_string(d) << "\n" << yaml;
  ASSERT_TRUE(loaded.inventory.has_value());
  const auto& inv = *loaded.inventory;
  ASSERT_EQ(inv.hosts.size(), 2u);
  const auto& gpu = inv.hosts[0];
  EXPECT_EQ(gpu.name, "gpu001");
  EXPECT_EQ(gpu.address, "10.1.0.1");
  EXPECT_EQ(gpu.provider, inventory::Provider::verbs);
  EXPECT_EQ(gpu.ssh.user, "root");
  ASSERT_EQ(gpu.nics.size(), 1u);
  EXPECT_EQ(gpu.nics[0].device, "mlx5_0");
  EXPECT_EQ(gpu.nics[0].gid_index, 3);  // the RoCE v2 GID carrying 10.10.0.1, not the v1 one
  EXPECT_EQ(gpu.nics[0].ip, "10.10.0.1");
  EXPECT_DOUBLE_EQ(gpu.nics[0].link_gbps, 400);
  EXPECT_EQ(gpu.nics[0].gpu, 1);  // PXB, not the SYS one
  EXPECT_EQ(gpu.nics[0].numa, 1);
  const auto& soft = inv.hosts[1];
  EXPECT_EQ(soft.name, "h2");  // an address on the command line: the host's own name
  EXPECT_EQ(soft.provider, inventory::Provider::soft);
  ASSERT_EQ(soft.nics.size(), 1u);
  EXPECT_EQ(soft.nics[0].netdev, "t1-nic0");
  EXPECT_EQ(soft.nics[0].ip, "198.18.1.12");
  EXPECT_NE(yaml.find("# gpu099: not probed: ssh: connect to host gpu099"), std::string::npos);
}

TEST(InventorySkeleton, ValuesTheInventoryRefusesBecomeComments) {
  DiscoveredHost h = soft_host();
  h.facts.hostname = "$(id)";
  h.management_ip = "";
  h.target = "198.19.4.12";
  const std::string yaml = inventory_skeleton({h}, {});
  EXPECT_EQ(yaml.find("$(id)"), std::string::npos);
  const auto loaded = inventory::parse_inventory(yaml, "skeleton.yaml");
  EXPECT_TRUE(loaded.inventory.has_value()) << yaml;
}

}  // namespace
}  // namespace rocehil::preflight
