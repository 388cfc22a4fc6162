// PFC and trust read from mlnx_qos and dcb output: the canonical values, and nothing where the
// output does not say (harness/preflight's QosReaders test holds these to the probe's reader).
#include "rocehil/settings/qos_output.hpp"

#include <gtest/gtest.h>

namespace rocehil::settings {
namespace {

TEST(QosOutput, MlnxQosPfcRowAndTrust) {
  const std::string text =
      "DCBX mode: OS controlled\nPriority trust state: pcp\nPFC configuration:\n"
      "\tpriority    0   1   2   3   4   5   6   7\n"
      "\tenabled     0   0   0   1   1   0   0   0   \n"
      "\tbuffer      0   0   0   1   1   0   0   0   \n";
  EXPECT_EQ(pfc_in_mlnx_qos(text), "3,4");
  EXPECT_EQ(trust_in_mlnx_qos(text), "pcp");
}

TEST(QosOutput, NothingWhereTheOutputDoesNotSay) {
  EXPECT_EQ(pfc_in_mlnx_qos("Priority trust state: dscp\n"), std::nullopt);
  EXPECT_EQ(pfc_in_mlnx_qos("PFC configuration:\n\tenabled 0 0 0 1\n"), std::nullopt);
  EXPECT_EQ(pfc_in_mlnx_qos("PFC configuration:\n\tenabled 0 0 0 2 0 0 0 0\n"), std::nullopt);
  // An "enabled" row outside the PFC table is not PFC's.
  EXPECT_EQ(pfc_in_mlnx_qos("\tenabled     0   0   0   1   0   0   0   0\n"), std::nullopt);
  EXPECT_EQ(trust_in_mlnx_qos("Priority trust state: vlan\n"), std::nullopt);
  EXPECT_EQ(pfc_in_dcb("pfc-cap 8 macsec-bypass off delay 4096\n"), std::nullopt);
  EXPECT_EQ(pfc_in_dcb("prio-pfc 9:on\n"), std::nullopt);
}

TEST(QosOutput, DcbPrioPfc) {
  EXPECT_EQ(pfc_in_dcb("pfc-cap 8 macsec-bypass off delay 4096\n"
                       "prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n"),
            "3");
  EXPECT_EQ(pfc_in_dcb("prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off\n"), "none");
}

}  // namespace
}  // namespace rocehil::settings
