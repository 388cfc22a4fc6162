// Two readers of the QoS tools' output: the probe's (what a run's snapshot shows) and the
// settings module's (what a setting reads back as after rocehil set it). On the same samples
// they must say the same, or a run could set PFC and then report it as something else.
#include <gtest/gtest.h>

#include <array>

#include "probe_samples.hpp"
#include "rocehil/preflight/host_facts.hpp"
#include "rocehil/settings/qos_output.hpp"

namespace rocehil::preflight {
namespace {

using testing::probe_sample;
using testing::probe_section;

std::string canonical(const std::array<bool, 8>& on) {
  std::string out;
  for (int p = 0; p < 8; ++p)
    if (on[p]) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "none" : out;
}

TEST(QosReaders, TheProbeAndTheSettingsReadTheSamePfcAndTrust) {
  int compared = 0;
  for (const std::string name : {"connectx_host.txt", "connectx_healthy.txt"}) {
    const std::string text = probe_sample(name);
    for (const NetdevFacts& n : parse_probe_output(text).netdevs) {
      if (!n.pfc) continue;
      SCOPED_TRACE(name + " " + n.name);
      const std::string out = probe_section(text, "@@ " + n.pfc_source + " " + n.name);
      ASSERT_FALSE(out.empty());
      if (n.pfc_source == "mlnx_qos") {
        EXPECT_EQ(settings::pfc_in_mlnx_qos(out), canonical(*n.pfc));
        EXPECT_EQ(settings::trust_in_mlnx_qos(out), n.trust);
      } else {
        EXPECT_EQ(settings::pfc_in_dcb(out), canonical(*n.pfc));
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 3);  // both tools' sections are among them
}

}  // namespace
}  // namespace rocehil::preflight
