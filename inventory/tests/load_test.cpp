#include "rocehil/inventory/load.hpp"

#include <gtest/gtest.h>

#include "inventory_text.hpp"

#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/json.hpp"

namespace rocehil::inventory {
namespace {

using testing::load_ok;
using testing::messages;

TEST(Load, LaunchersFromDefaultsAndHosts) {
  const Inventory inv = load_ok(R"(schema_version: 1
defaults: {launcher: slurm}
hosts:
  - {name: gpu001}
  - {name: gpu002, launcher: ssh}
  - {name: lab1, launcher: local}
)");
  EXPECT_EQ(inv.defaults.launcher, Launcher::slurm);
  EXPECT_EQ(inv.hosts[0].launcher, Launcher::slurm);
  EXPECT_EQ(inv.hosts[1].launcher, Launcher::ssh);
  EXPECT_EQ(inv.hosts[2].launcher, Launcher::local);
  EXPECT_EQ(to_string(Launcher::slurm), "slurm");
  EXPECT_EQ(launcher_named("slurm"), Launcher::slurm);
  EXPECT_FALSE(launcher_named("pdsh"));
  const auto bad = messages("schema_version: 1\ndefaults: {launcher: pdsh}\nhosts: [{name: h1}]\n");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0],
            "f.yaml:2:22: defaults: launcher 'pdsh' is not one of ssh, local, slurm; use "
            "one of them");
}

TEST(Load, TheControllerAgentsDialHomeTo) {
  const Inventory inv = load_ok(R"(schema_version: 1
controller: {address: 198.18.0.1, port: 7400, listen: 0.0.0.0, join_timeout_s: 90}
hosts: [{name: h1}]
)");
  ASSERT_TRUE(inv.controller.has_value());
  EXPECT_EQ(inv.controller->address, "198.18.0.1");
  EXPECT_EQ(inv.controller->port, 7400);
  EXPECT_EQ(inv.controller->listen, "0.0.0.0");
  EXPECT_EQ(inv.controller->join_timeout_s, 90);
  EXPECT_EQ(inv.controller->where.line, 2);
  EXPECT_EQ(to_json(inv)["controller"]["port"], 7400);
  const Inventory plain = load_ok("schema_version: 1\nhosts: [{name: h1}]\n");
  EXPECT_FALSE(plain.controller.has_value());
  EXPECT_FALSE(to_json(plain).contains("controller"));
  const Inventory least =
      load_ok("schema_version: 1\ncontroller: {address: 10.0.0.9}\nhosts: [{name: h1}]\n");
  EXPECT_EQ(least.controller->port, 0);
  EXPECT_EQ(least.controller->listen, "");
  EXPECT_EQ(least.controller->join_timeout_s, 60);

  const auto bad = [](const std::string& controller) {
    return messages("schema_version: 1\ncontroller: " + controller + "\nhosts: [{name: h1}]\n");
  };
  EXPECT_EQ(bad("{address: ctl.example.com}"),
            std::vector<std::string>{"f.yaml:2:23: controller: address 'ctl.example.com' is not "
                                     "an IPv4 address; give the controller machine's address as "
                                     "the hosts reach it (198.18.0.1)"});
  EXPECT_EQ(bad("{port: 7400}").size(), 1u);
  EXPECT_NE(bad("{port: 7400}")[0].find("address"), std::string::npos) << bad("{port: 7400}")[0];
  EXPECT_EQ(bad("{address: 10.0.0.9, port: 70000}").size(), 1u);
  EXPECT_EQ(bad("{address: 10.0.0.9, join_timeout_s: 0}").size(), 1u);
  EXPECT_EQ(bad("{address: 10.0.0.9, secret: x}").size(), 1u);
}

TEST(Load, AControllerWhoseAgentsOthersStart) {
  const Inventory inv = load_ok(R"(schema_version: 1
controller: {address: 10.0.0.5, port: 7400, agents: external, fleet: nightly, secret_file: /etc/rocehil/fleet.key}
hosts: [{name: h1}]
)");
  EXPECT_TRUE(inv.controller->agents_external);
  EXPECT_EQ(inv.controller->fleet, "nightly");
  EXPECT_EQ(inv.controller->secret_file, "/etc/rocehil/fleet.key");
  EXPECT_EQ(to_json(inv)["controller"]["agents"], "external");
  const auto bad = [](const std::string& controller) {
    return messages("schema_version: 1\ncontroller: " + controller + "\nhosts: [{name: h1}]\n");
  };
  // Each missing piece is named, all at once.
  const auto missing = bad("{address: 10.0.0.5, agents: external}");
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_NE(missing[0].find("needs a fixed port (port: 7400)"), std::string::npos) << missing[0];
  EXPECT_NE(missing[1].find("needs 'fleet'"), std::string::npos) << missing[1];
  EXPECT_NE(missing[2].find("needs 'secret_file'"), std::string::npos) << missing[2];
  EXPECT_EQ(bad("{address: 10.0.0.5, fleet: nightly}").size(), 1u);
  EXPECT_NE(bad("{address: 10.0.0.5, fleet: nightly}")[0].find("go with 'agents: external'"),
            std::string::npos);
  EXPECT_EQ(bad("{address: 10.0.0.5, agents: pdsh}").size(), 1u);
  EXPECT_EQ(bad("{address: 10.0.0.5, port: 7400, agents: external, fleet: 'a b', "
                "secret_file: /k}")
                .size(),
            1u);
}

TEST(Load, DefaultsAndOverrides) {
  const Inventory inv = load_ok(R"(schema_version: 1
name: lab
defaults:
  ssh: {user: ops, port: 2222, identity: ~/.ssh/lab, options: [IdentitiesOnly=yes]}
  agent: /opt/rocehil/bin/rocehil
  provider: verbs
  link_gbps: 400
  gid_index: 3
hosts:
  - name: gpu001
    nics:
      - {device: mlx5_0, netdev: ens1f0np0, ip: 10.10.0.1, rail: 0, gpu: 0, numa: 0, mtu: 9000}
      - {device: mlx5_1, port: 2, gid_index: 1, ip: 10.11.0.1, link_gbps: 200, rail: 1}
  - name: gpu002
    address: gpu002.lab.example.com
    provider: soft
    agent: rocehil
    ssh: {user: root, jump: ops@bastion:22, options: [ServerAliveCountMax=2], connect_timeout_s: 3}
    nics: []
)");
  EXPECT_EQ(inv.name, "lab");
  ASSERT_EQ(inv.hosts.size(), 2u);
  const Host& a = inv.hosts[0];
  EXPECT_EQ(a.address, "gpu001");  // no address: ssh resolves the name
  EXPECT_EQ(a.ssh.user, "ops");
  EXPECT_EQ(a.ssh.port, 2222);
  EXPECT_EQ(a.ssh.identity, "~/.ssh/lab");
  EXPECT_EQ(a.agent, "/opt/rocehil/bin/rocehil");
  EXPECT_EQ(a.provider, Provider::verbs);
  ASSERT_EQ(a.nics.size(), 2u);
  EXPECT_EQ(a.nics[0].gid_index, 3);
  EXPECT_EQ(a.nics[0].port, 1);
  EXPECT_DOUBLE_EQ(a.nics[0].link_gbps, 400);
  EXPECT_EQ(a.nics[0].mtu, 9000);
  EXPECT_EQ(a.nics[0].where.line, 12);
  EXPECT_EQ(a.nics[1].port, 2);
  EXPECT_EQ(a.nics[1].gid_index, 1);
  EXPECT_DOUBLE_EQ(a.nics[1].link_gbps, 200);
  EXPECT_EQ(a.nics[1].netdev, "");
  const Host& b = inv.hosts[1];
  EXPECT_EQ(b.address, "gpu002.lab.example.com");
  EXPECT_EQ(b.provider, Provider::soft);
  EXPECT_EQ(b.agent, "rocehil");
  EXPECT_EQ(b.ssh.user, "root");
  EXPECT_EQ(b.ssh.port, 2222);  // not overridden: from defaults
  EXPECT_EQ(b.ssh.jump, "ops@bastion:22");
  EXPECT_EQ(b.ssh.connect_timeout_s, 3);
  EXPECT_EQ(b.ssh.options,
            (std::vector<std::string>{"IdentitiesOnly=yes", "ServerAliveCountMax=2"}));
  EXPECT_EQ(b.where.line, 14);
}

TEST(Load, RangesExpandInLockstep) {
  const Inventory inv = load_ok(R"(schema_version: 1
defaults: {provider: verbs, gid_index: 3}
hosts:
  - name: gpu[001-064]
    address: 10.0.0.[1-64]
    rack: r1
    labels: [gpu, h100]
    nics:
      - {device: mlx5_0, netdev: ens1f0np0, ip: "10.10.0.[1-64]", rail: 0}
      - {device: mlx5_1, netdev: ens2f0np0, ip: "10.11.0.[101-164]", rail: 1}
)");
  ASSERT_EQ(inv.hosts.size(), 64u);
  for (std::size_t i = 0; i < 64; ++i) {
    const Host& h = inv.hosts[i];
    const std::string n = std::to_string(i + 1);
    EXPECT_EQ(h.name, (i + 1 < 10 ? "gpu00" : "gpu0") + n);
    EXPECT_EQ(h.address, "10.0.0." + n);
    EXPECT_EQ(h.rack, "r1");
    EXPECT_EQ(h.labels, (std::vector<std::string>{"gpu", "h100"}));
    ASSERT_EQ(h.nics.size(), 2u);
    EXPECT_EQ(h.nics[0].ip, "10.10.0." + n);
    EXPECT_EQ(h.nics[1].ip, "10.11.0." + std::to_string(i + 101));
    EXPECT_EQ(h.where.line, 4);
  }
  ASSERT_EQ(inv.racks.size(), 1u);  // named only by hosts: the implicit rack list
  EXPECT_EQ(inv.racks[0].hosts.size(), 64u);
}

TEST(Load, RangedNicLinksNameListedLinks) {
  const std::string head = R"(schema_version: 1
defaults: {provider: soft}
hosts:
  - name: h[1-2]
    nics: [{netdev: eth0, link: "h[1-2]-l1"}]
switches: [{name: l1, role: leaf}]
links:
  - {name: h1-l1, a: "h1:eth0", b: "l1:swp1"}
)";
  EXPECT_EQ(messages(head + "  - {name: h2-l1, a: \"h2:eth0\", b: \"l1:swp2\"}\n"),
            std::vector<std::string>{});
  EXPECT_EQ(messages(head),
            std::vector<std::string>{"f.yaml:5:33: host entry 'h[1-2]': nic 1: link 'h2-l1' is not "
                                     "in links; add it there, or correct the name"});
}

TEST(Load, RacksSectionFillsHostRacks) {
  const Inventory inv = load_ok(R"(schema_version: 1
defaults: {provider: soft}
hosts:
  - name: h[1-4]
racks:
  - {name: r1, leaf: l1, hosts: ["h[1-2]"]}
  - {name: r2, leaf: l2, hosts: [h3, h4]}
switches:
  - {name: l1, role: leaf, rack: r1}
  - {name: l2, role: leaf, rack: r2}
  - {name: "s[1-2]", role: spine, address: "10.9.9.[1-2]"}
links:
  - {name: l1-s1, a: "l1:swp1", b: "s1:swp1", gbps: 400}
captures:
  - {name: m1, host: h4, backend: dpdk, dpdk_args: [-a, "0000:3b:00.1"], mirrors: {switch: s1, links: [l1-s1], direction: spine-to-leaf}}
)");
  EXPECT_EQ(inv.hosts[1].rack, "r1");
  EXPECT_EQ(inv.hosts[2].rack, "r2");
  EXPECT_EQ(inv.racks[1].leaf, "l2");
  EXPECT_EQ(inv.racks[1].hosts, (std::vector<std::string>{"h3", "h4"}));
  ASSERT_EQ(inv.switches.size(), 4u);
  EXPECT_EQ(inv.switches[3].name, "s2");
  EXPECT_EQ(inv.switches[3].address, "10.9.9.2");
  EXPECT_EQ(inv.links[0].a.node, "l1");
  EXPECT_EQ(inv.links[0].b.port, "swp1");
  ASSERT_EQ(inv.captures.size(), 1u);
  EXPECT_EQ(inv.captures[0].dpdk_args, (std::vector<std::string>{"-a", "0000:3b:00.1"}));
  EXPECT_EQ(inv.captures[0].mirrors.direction, "spine-to-leaf");
}

TEST(Load, RemoteMirrorSessionsShareACollectorInterface) {
  const std::string head = R"(schema_version: 1
defaults: {provider: soft}
hosts:
  - name: cap
switches:
  - {name: "s[1-2]", role: spine}
captures:
  - {name: s1-mirror, host: cap, interface: eth0, remote: {session: 1, source: 198.19.1.201}, mirrors: {switch: s1}}
  - {name: s2-mirror, host: cap, interface: eth0, remote: {session: 2}, mirrors: {switch: s2}}
)";
  const Inventory inv = load_ok(head);
  ASSERT_EQ(inv.captures.size(), 2u);
  ASSERT_TRUE(inv.captures[0].remote);
  EXPECT_EQ(inv.captures[0].remote->session, 1u);
  EXPECT_EQ(inv.captures[0].remote->source, "198.19.1.201");
  EXPECT_EQ(inv.captures[1].remote->session, 2u);
  EXPECT_EQ(inv.captures[1].remote->source, "");
  EXPECT_EQ(to_json(inv.captures[0])["remote"],
            nlohmann::json::parse(R"({"session": 1, "source": "198.19.1.201"})"));
  EXPECT_FALSE(to_json(inv.captures[1])["remote"].contains("source"));

  EXPECT_EQ(
      messages(head + "  - {name: again, host: cap, interface: eth0, remote: {session: 2}}\n"),
      std::vector<std::string>{"f.yaml:10:65: capture 'again': session 2 on cap:eth0 is taken "
                               "by capture 's2-mirror' (line 9) already; give each capture "
                               "point its own session"});
  EXPECT_EQ(messages(head + "  - {name: x, host: cap, interface: eth1, remote: {session: -3}}\n"),
            std::vector<std::string>{"f.yaml:10:61: capture 'x': remote session -3 is out of "
                                     "range; use 0-4294967295"});
  EXPECT_EQ(messages(head + "  - {name: x, host: cap, interface: eth1, remote: {session: 1, "
                            "source: spine1}}\n"),
            std::vector<std::string>{"f.yaml:10:72: capture 'x': remote source 'spine1' is not an "
                                     "IP address; write the switch's tunnel source address, e.g. "
                                     "10.0.0.11"});
  EXPECT_EQ(
      messages(head + "  - {name: x, host: cap, interface: eth1, remote: {source: 10.0.0.1}}\n"),
      std::vector<std::string>{"f.yaml:10:51: capture 'x' remote has no 'session'; add one, "
                               "e.g. 'session: 1'"});
}

TEST(Load, EveryProblemAtOnceInFileOrder) {
  const auto m = messages(R"(schema_version: 1
defaults: {provider: soft, link_gbps: -1}
hosts:
  - name: h1
    colour: blue
  - name: h2
    nics: [{netdev: eth0, ip: 1.2.3}]
  - name: h1
captures:
  - {name: c1, host: nowhere, interface: eth1}
)");
  ASSERT_EQ(m.size(), 5u) << ::testing::PrintToString(m);
  EXPECT_EQ(m[0].rfind("f.yaml:2:39: defaults: link_gbps", 0), 0u) << m[0];
  EXPECT_EQ(m[1].rfind("f.yaml:5:5: unknown key 'colour'", 0), 0u) << m[1];
  EXPECT_EQ(m[2].rfind("f.yaml:7:31: host 'h2': nic 1: ip '1.2.3'", 0), 0u) << m[2];
  EXPECT_EQ(m[3].rfind("f.yaml:8:11: host 'h1' is defined twice", 0), 0u) << m[3];
  EXPECT_EQ(m[4].rfind("f.yaml:10:22: capture 'c1': host 'nowhere'", 0), 0u) << m[4];
}

TEST(Load, KeyGivenTwiceIsAnError) {
  const auto m = messages("schema_version: 1\nhosts:\n  - {name: h1, name: h2, provider: soft}\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("key 'name' appears twice"), std::string::npos);
}

TEST(Load, DeepNestingAndGarbageAreDiagnosticsNotCrashes) {
  EXPECT_EQ(messages(std::string(100, '[') + std::string(100, ']')).size(), 1u);
  EXPECT_EQ(messages("\x01\x02\xff").size(), 1u);
  EXPECT_EQ(messages("- a\n- b\n").size(), 1u);
  EXPECT_EQ(messages("schema_version: 1\nhosts: 7\n").size(), 1u);
}

TEST(Load, LoadInventoryThrowsWithEveryMessage) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "rocehil-load-test.yaml").string();
  std::ofstream(path) << "schema_version: 1\nhosts:\n  - {name: 'a b'}\n  - {name: h2, port: 1}\n";
  try {
    load_inventory(path);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    const std::string what = e.what();
    EXPECT_NE(what.find(path + ":3:12: host name 'a b'"), std::string::npos) << what;
    EXPECT_NE(what.find(path + ":4:16: unknown key 'port'"), std::string::npos) << what;
  }
  std::filesystem::remove(path);
  EXPECT_THROW(load_inventory("/nonexistent/fabric.yaml"), Error);
}

}  // namespace
}  // namespace rocehil::inventory
