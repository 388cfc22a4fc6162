// PFC and trust through mlnx_qos and dcb: the words run, the values read from their output (the
// ConnectX probe sample the preflight is tested on), a real dcb refusing a device without DCB,
// and a journaled change through a stand-in for mlnx_qos (MLNX_OFED is not on this machine).
#include "qos_tools.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "probe_samples.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/perftest/child_process.hpp"
#include "rocehil/settings/journaled_changes.hpp"

namespace rocehil::agent {
namespace {

using Words = std::vector<std::string>;

// The lines of one section ("@@ mlnx_qos ens1f0np0") of the ConnectX probe sample.
std::string probe_section(const std::string& header) {
  return preflight::testing::probe_section(preflight::testing::probe_sample("connectx_host.txt"),
                                           header);
}

const settings::Setting& setting(std::string_view name) {
  return *settings::find(name);
}

TEST(QosTools, TheWordsSetWhatTheCanonicalValueSays) {
  EXPECT_EQ(qos_set_words("mlnx_qos", "pfc", "eth1", "3,4"),
            (Words{"mlnx_qos", "-i", "eth1", "--pfc", "0,0,0,1,1,0,0,0"}));
  EXPECT_EQ(qos_set_words("mlnx_qos", "pfc", "eth1", "none"),
            (Words{"mlnx_qos", "-i", "eth1", "--pfc", "0,0,0,0,0,0,0,0"}));
  EXPECT_EQ(qos_set_words("mlnx_qos", "trust", "eth1", "dscp"),
            (Words{"mlnx_qos", "-i", "eth1", "--trust", "dscp"}));
  EXPECT_EQ(qos_set_words("dcb", "pfc", "eth1", "3"),
            (Words{"dcb", "pfc", "set", "dev", "eth1", "prio-pfc", "0:off", "1:off", "2:off",
                   "3:on", "4:off", "5:off", "6:off", "7:off"}));
  EXPECT_TRUE(qos_set_words("dcb", "trust", "eth1", "dscp").empty());
}

TEST(QosTools, ValuesAreReadFromTheToolsOutputAsThePreflightReadsThem) {
  const std::string mlnx = probe_section("@@ mlnx_qos ens1f0np0");
  ASSERT_NE(mlnx.find("PFC configuration"), std::string::npos);
  EXPECT_EQ(qos_value("mlnx_qos", "pfc", mlnx), "3");
  EXPECT_EQ(qos_value("mlnx_qos", "trust", mlnx), "dscp");
  const std::string dcb = probe_section("@@ dcb ens2f0np0");
  EXPECT_EQ(qos_value("dcb", "pfc", dcb), "none");
  EXPECT_EQ(qos_value("dcb", "trust", dcb), std::nullopt);
  EXPECT_EQ(qos_value("mlnx_qos", "pfc", "mlnx_qos: command failed\n"), std::nullopt);
}

TEST(QosTools, ARealDcbOnADeviceWithoutDcbIsAnErrorInItsOwnWords) {
  if (!perftest::find_on_path("dcb") || perftest::find_on_path("mlnx_qos"))
    GTEST_SKIP() << "needs iproute2's dcb and no mlnx_qos";
  const QosTools lo("lo");
  ASSERT_TRUE(lo.has(setting("pfc")));
  std::string why;
  EXPECT_FALSE(lo.has(setting("trust"), &why));
  EXPECT_EQ(why, "the trust mode is set with mlnx_qos (MLNX_OFED), which this host does not have");
  try {
    (void)lo.read(setting("pfc"));
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dcb pfc show dev lo failed (exit 1): Attribute read: "
                                         "Operation not supported"),
              std::string::npos)
        << e.what();
  }
}

// mlnx_qos as MLNX_OFED prints it (the probe sample), with the PFC row the last --pfc set; the
// next --pfc refused (and nothing changed) when `refuse` is set.
struct MlnxQosStandIn {
  std::string pfc_row = "0   0   0   1   0   0   0   0";
  bool refuse = false;
  Words last;
  ToolRun operator()(const Words& words) {
    last = words;
    if (words.size() == 3) {
      std::string text = probe_section("@@ mlnx_qos ens1f0np0");
      const auto at = text.find("0   0   0   1   0   0   0   0");
      text.replace(at, pfc_row.size(), pfc_row);
      return {0, text, ""};
    }
    if (refuse) {
      refuse = false;
      return {1, "", "Error: priority flow control cannot be set while DCBX is on\n"};
    }
    pfc_row.clear();
    for (std::size_t i = 0; i < words[4].size(); i += 2)
      pfc_row += std::string(pfc_row.empty() ? "" : "   ") + words[4][i];
    return {0, "", ""};
  }
};

TEST(QosTools, PfcIsJournaledSetReadBackAndPutBack) {
  auto tools = std::make_shared<MlnxQosStandIn>();
  const std::string journal = ::testing::TempDir() + "/qos-h1.json";
  std::remove(journal.c_str());
  settings::JournaledChanges changes(
      [tools](const std::string& netdev) {
        return std::make_unique<QosTools>(
            netdev, [tools](const Words& w) { return (*tools)(w); },
            [](std::string_view program) { return program == "mlnx_qos"; });
      },
      journal, "h1");
  const auto made =
      changes.apply({settings::assign("pfc", "3,4", "--set")}, {"ens1f0np0"}, "r1", "t");
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].before, "3");
  EXPECT_EQ(made[0].where, "mlnx_qos (dev ens1f0np0)");
  EXPECT_EQ(tools->pfc_row, "0   0   0   1   1   0   0   0");
  EXPECT_EQ(changes.restore().size(), 1u);
  EXPECT_EQ(tools->pfc_row, "0   0   0   1   0   0   0   0");

  tools->refuse = true;
  try {
    changes.apply({settings::assign("pfc", "3,4", "--set")}, {"ens1f0np0"}, "r2", "t");
    ADD_FAILURE() << "applied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,1,0,0,0 was "
                                         "refused (exit 1): Error: priority flow control"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(tools->pfc_row, "0   0   0   1   0   0   0   0");
  EXPECT_FALSE(settings::load(journal).has_value());
}

}  // namespace
}  // namespace rocehil::agent
