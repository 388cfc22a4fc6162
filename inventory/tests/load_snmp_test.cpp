#include <gtest/gtest.h>

#include "inventory_text.hpp"

#include "rocehil/inventory/json.hpp"
#include "rocehil/inventory/load.hpp"

namespace rocehil::inventory {
namespace {

using testing::load_ok;
using testing::messages;

std::string with_switches(const std::string& defaults_snmp, const std::string& switches) {
  return "schema_version: 1\n" +
         (defaults_snmp.empty() ? std::string() : "defaults:\n  snmp: " + defaults_snmp + "\n") +
         "hosts:\n  - {name: h1, provider: soft}\nswitches:\n" + switches;
}

TEST(LoadSnmp, DefaultsApplyAndASwitchReplacesThemWhole) {
  const Inventory inv = load_ok(with_switches(
      "{version: 2c, community_file: /etc/rocehil/community, timeout_ms: 500}",
      "  - {name: \"l[1-2]\", role: leaf, address: \"10.0.0.[1-2]\"}\n"
      "  - name: s1\n    role: spine\n    snmp: {version: 3, user: rocehil, auth: sha256, "
      "auth_key_env: SNMP_AUTH, priv: aes, priv_key_file: ~/.snmp/priv, retries: 0}\n"
      "  - {name: s2, role: spine}\n"));
  ASSERT_EQ(inv.switches.size(), 4u);
  ASSERT_TRUE(inv.switches[0].snmp);
  EXPECT_EQ(inv.switches[1].snmp->community_file, "/etc/rocehil/community");
  EXPECT_EQ(inv.switches[1].snmp->timeout_ms, 500);
  const SnmpSettings& v3 = *inv.switches[2].snmp;
  EXPECT_EQ(v3.version, SnmpSettings::Version::v3);
  EXPECT_EQ(v3.user, "rocehil");
  EXPECT_EQ(v3.auth, "sha256");
  EXPECT_EQ(v3.auth_key_env, "SNMP_AUTH");
  EXPECT_EQ(v3.priv, "aes");
  EXPECT_EQ(v3.priv_key_file, "~/.snmp/priv");
  EXPECT_EQ(v3.retries, 0);
  EXPECT_EQ(v3.timeout_ms, 1000);  // not the defaults' 500: replaced as a whole
  EXPECT_EQ(v3.community_file, "");
  EXPECT_EQ(inv.switches[3].snmp->version, SnmpSettings::Version::v2c);
}

TEST(LoadSnmp, NoSnmpAnywhereMeansNotPolled) {
  const Inventory inv = load_ok(with_switches("", "  - {name: l1, role: leaf}\n"));
  EXPECT_FALSE(inv.switches[0].snmp.has_value());
}

TEST(LoadSnmp, JsonNamesWhereSecretsLiveNeverTheSecrets) {
  const Inventory inv = load_ok(with_switches("{version: 2c, community_env: ROCEHIL_COMMUNITY}",
                                              "  - {name: l1, role: leaf}\n"));
  const auto j = to_json(inv);
  EXPECT_EQ(j["switches"][0]["snmp"]["community_env"], "ROCEHIL_COMMUNITY");
  EXPECT_EQ(j["switches"][0]["snmp"]["version"], "2c");
  EXPECT_FALSE(j["switches"][0]["snmp"].contains("community"));
}

TEST(LoadSnmp, AWriteCredentialIsWhereToReadItOrV3sWritableAndOptional) {
  const Inventory inv = load_ok(
      with_switches("",
                    "  - {name: l1, role: leaf, snmp: {version: 2c, community_file: /c, "
                    "write_community_file: ~/.snmp/write}}\n"
                    "  - {name: l2, role: leaf, snmp: {version: 2c, community_env: C, "
                    "write_community_env: ROCEHIL_WRITE}}\n"
                    "  - {name: s1, role: spine, snmp: {version: 3, user: u, writable: true}}\n"
                    "  - {name: s2, role: spine, snmp: {version: 3, user: u}}\n"
                    "  - {name: s3, role: spine, snmp: {version: 2c, community_file: /c}}\n"));
  const auto& s = inv.switches;
  EXPECT_EQ(s[0].snmp->write_community_file, "~/.snmp/write");
  EXPECT_EQ(s[1].snmp->write_community_env, "ROCEHIL_WRITE");
  EXPECT_TRUE(s[2].snmp->writable);
  std::vector<bool> can_write;
  for (const Switch& sw : s) can_write.push_back(sw.snmp->can_write());
  EXPECT_EQ(can_write, (std::vector<bool>{true, true, true, false, false}));
  const auto j = to_json(inv);
  EXPECT_EQ(j["switches"][0]["snmp"]["write_community_file"], "~/.snmp/write");
  EXPECT_EQ(j["switches"][1]["snmp"]["write_community_env"], "ROCEHIL_WRITE");
  EXPECT_EQ(j["switches"][2]["snmp"]["writable"], true);
  EXPECT_FALSE(j["switches"][4]["snmp"].contains("write_community_file"));
}

TEST(LoadSnmp, AnInlineSecretIsRefusedWithWhereToPutIt) {
  const auto m = messages(
      with_switches("", "  - {name: l1, role: leaf, snmp: {version: 2c, community: public}}\n"));
  ASSERT_EQ(m.size(), 1u) << ::testing::PrintToString(m);
  EXPECT_NE(m[0].find("f.yaml:5:"), std::string::npos) << m[0];
  EXPECT_NE(m[0].find("community is a secret"), std::string::npos) << m[0];
  EXPECT_NE(m[0].find("community_file"), std::string::npos) << m[0];
}

TEST(LoadSnmp, EachMistakeIsOneLineNamingTheSwitchAndField) {
  const struct {
    const char* snmp;
    const char* expected;
  } cases[] = {
      {"{version: 1, community_file: /c}", "switch 'l1': snmp: version"},
      {"{community_file: /c}", "version"},
      {"{version: 2c}", "the community is missing; add community_file"},
      {"{version: 2c, community_file: /c, community_env: C}", "not both"},
      {"{version: 2c, community_env: lower-case}", "not an environment variable name"},
      {"{version: 2c, community_file: relative/path}", "not a usable path"},
      {"{version: 2c, community_file: /c, user: u}", "user is for SNMP version 3 only"},
      {"{version: 3, community_file: /c, user: u}", "community_file is for SNMP version 2c only"},
      {"{version: 3}", "user"},
      {"{version: 3, user: u, auth: sha}", "the auth_key is missing"},
      {"{version: 3, user: u, auth: sha1, auth_key_env: A}", "auth"},
      {"{version: 3, user: u, priv: aes, priv_key_env: P}", "priv needs auth"},
      {"{version: 3, user: u, auth: sha, auth_key_env: A, priv: aes}", "the priv_key is missing"},
      {"{version: 2c, community_file: /c, port: 0}", "port"},
      {"{version: 2c, community_file: /c, timeout_ms: 1}", "timeout_ms"},
      {"{version: 2c, community_file: /c, retries: 99}", "retries"},
      {"{version: 2c, community_file: /c, comunity_env: X}", "community_env"},
      {"{version: 2c, community_file: /c, write_community: private}",
       "write_community is a secret and is not read from the inventory; put it in a file "
       "(write_community_file: PATH"},
      {"{version: 2c, community_file: /c, write_community_file: /w, write_community_env: W}",
       "give write_community_file or write_community_env, not both"},
      {"{version: 2c, community_file: /c, write_community_file: w}", "not a usable path"},
      {"{version: 2c, community_file: /c, write_community_env: w}",
       "not an environment variable name"},
      {"{version: 2c, community_file: /c, writable: true}",
       "writable is for SNMP version 3 (the user may write); for 2c give write_community_file"},
      {"{version: 3, user: u, write_community_file: /w}",
       "write_community_file is for SNMP version 2c only"},
      {"{version: 3, user: u, writable: yes}", "writable 'yes' is not one of true, false"},
  };
  for (const auto& c : cases) {
    const auto m = messages(
        with_switches("", std::string("  - {name: l1, role: leaf, snmp: ") + c.snmp + "}\n"));
    ASSERT_FALSE(m.empty()) << c.snmp;
    EXPECT_NE(m[0].find(c.expected), std::string::npos) << c.snmp << " -> " << m[0];
    EXPECT_EQ(m[0].find('\n'), std::string::npos) << m[0];
  }
}

}  // namespace
}  // namespace rocehil::inventory
