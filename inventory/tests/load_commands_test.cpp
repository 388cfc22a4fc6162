#include <gtest/gtest.h>

#include "inventory_text.hpp"
#include "rocehil/inventory/load.hpp"

namespace rocehil::inventory {
namespace {

using testing::load_ok;
using testing::messages;

std::string with(const std::string& host, const std::string& switches) {
  return "schema_version: 1\ndefaults:\n  ssh: {user: admin}\nhosts:\n" + host + "switches:\n" +
         switches;
}

TEST(LoadCommands, HostAndSwitchCommandsAndTheSwitchsLinkControlAreRead) {
  const Inventory inv = load_ok(
      with("  - name: h1\n    provider: soft\n    commands: {drain: \"systemctl stop slurmd\"}\n",
           "  - name: s1\n    role: spine\n    address: 10.0.0.9\n"
           "    ssh: {port: 2222}\n"
           "    link_down: \"sudo config interface shutdown {port}\"\n"
           "    link_up: \"sudo config interface startup {port}\"\n"
           "    commands:\n      drain: \"sudo config bgp shutdown all\"\n"
           "      undrain: \"sudo config bgp startup all\"\n"
           "  - {name: s2, role: spine}\n"));
  ASSERT_EQ(inv.hosts[0].commands.size(), 1u);
  EXPECT_EQ(inv.hosts[0].commands[0].name, "drain");
  EXPECT_EQ(inv.hosts[0].commands[0].text, "systemctl stop slurmd");
  const Switch& s1 = inv.switches[0];
  EXPECT_EQ(s1.link_down, "sudo config interface shutdown {port}");
  EXPECT_EQ(s1.link_up, "sudo config interface startup {port}");
  EXPECT_EQ(s1.ssh.user, "admin");  // the defaults', under its own
  EXPECT_EQ(s1.ssh.port, 2222);
  ASSERT_EQ(s1.commands.size(), 2u);
  EXPECT_EQ(s1.commands[1].name, "undrain");
  EXPECT_EQ(s1.commands[1].where.line, 17);
  EXPECT_TRUE(inv.switches[1].link_down.empty());
  EXPECT_EQ(inv.switches[1].ssh.user, "admin");
}

TEST(LoadCommands, APortCommandNeedsItsPortAndNoOtherPlaceholder) {
  EXPECT_EQ(messages(with("  - {name: h1, provider: soft, commands: {x: \"\"}}\n",
                          "  - name: s1\n    role: spine\n"
                          "    link_down: \"nv set interface swp1 link state down\"\n"
                          "    link_up: \"nv set interface {iface} link state up\"\n"
                          "  - name: s2\n    role: spine\n"
                          "    link_down: \"shutdown {port}\"\n"
                          "    commands: [drain]\n")),
            (std::vector<std::string>{
                "f.yaml:5:46: host 'h1': commands: x must be one non-empty line, e.g. 'sudo "
                "config interface shutdown {port}'",
                "f.yaml:9:16: switch 's1': link_down has no {port}; write it where the port "
                "goes, e.g. 'sudo config interface shutdown {port}'",
                "f.yaml:10:14: switch 's1': link_up: '{iface}' is not a placeholder rocehil "
                "fills; write {port} where the switch's port goes",
                "f.yaml:11:5: switch 's2': give link_down and link_up together (a link taken "
                "down is brought up again)",
                "f.yaml:14:15: switch 's2': commands must be a map of names to command lines, "
                "e.g. 'drain: \"sudo config qos reload\"'"}));
}

}  // namespace
}  // namespace rocehil::inventory
