#include "rocehil/inventory/json.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rocehil/inventory/load.hpp"
#include "rocehil/inventory/selection.hpp"

namespace rocehil::inventory {
namespace {

TEST(Json, UnsetFieldsAreLeftOut) {
  const LoadResult r = parse_inventory(R"(schema_version: 1
defaults: {provider: soft}
hosts:
  - name: h1
    address: 10.0.0.1
    nics: [{netdev: eth0, ip: 10.1.0.1}]
  - name: h2
    provider: verbs
    nics: [{device: mlx5_0, gid_index: 3, gpu: 2, link_gbps: 400}]
captures:
  - {name: c1, host: h1, interface: eth1}
)",
                                       "j.yaml");
  ASSERT_TRUE(r.inventory) << to_string(r.diagnostics.front());
  const nlohmann::json j = to_json(*r.inventory);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["file"], "j.yaml");
  const auto& h1 = j["hosts"][0];
  EXPECT_EQ(h1["address"], "10.0.0.1");
  EXPECT_EQ(h1["provider"], "soft");
  EXPECT_EQ(h1["line"], 4);
  EXPECT_FALSE(h1.contains("rack"));
  EXPECT_FALSE(h1["nics"][0].contains("device"));
  EXPECT_FALSE(h1["nics"][0].contains("port"));
  EXPECT_FALSE(h1["nics"][0].contains("gid_index"));
  EXPECT_EQ(h1["nics"][0]["ip"], "10.1.0.1");
  const auto& n2 = j["hosts"][1]["nics"][0];
  EXPECT_EQ(n2["device"], "mlx5_0");
  EXPECT_EQ(n2["port"], 1);
  EXPECT_EQ(n2["gid_index"], 3);
  EXPECT_EQ(n2["gpu"], 2);
  EXPECT_EQ(n2["link_gbps"], 400.0);
  EXPECT_FALSE(n2.contains("numa"));
  EXPECT_EQ(j["captures"][0]["backend"], "pcap");
  EXPECT_FALSE(j["captures"][0].contains("dpdk_args"));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(DocsExample, FileEqualsTheBlockInTheDoc) {
  const std::string example = read_text(ROCEHIL_DOCS_DIR "/examples/fabric.yaml");
  ASSERT_FALSE(example.empty());
  EXPECT_NE(read_text(ROCEHIL_DOCS_DIR "/inventory.md").find("```yaml\n" + example + "```"),
            std::string::npos);
}

TEST(DocsExample, Loads) {
  const Inventory inv = load_inventory(ROCEHIL_DOCS_DIR "/examples/fabric.yaml");
  EXPECT_EQ(inv.hosts.size(), 34u);
  EXPECT_EQ(select_hosts(inv, "label:gpu").size(), 32u);
  EXPECT_EQ(inv.find_host("gpu020")->ssh.jump, "ops@bastion.lab.example.com");
  EXPECT_EQ(inv.find_host("gpu020")->nics[3].ip, "10.13.2.4");
  EXPECT_EQ(inv.find_switch("leaf02")->rack, "r2");
  EXPECT_EQ(inv.captures.size(), 2u);
  EXPECT_EQ(select_hosts(inv, "rail:0&rack:r1").size(), 16u);
  EXPECT_EQ(select_hosts(inv, "label:gpu@1/rack").size(), 2u);
}

}  // namespace
}  // namespace rocehil::inventory
