// Two readers of the QoS tools' output: the probe's (what a run's snapshot shows) and the
// settings module's (what a setting reads back as after rocehil set it). On the same samples
// they must say the same, or a run could set PFC and then report it as something else.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocehil/preflight/host_facts.hpp"
#include "rocehil/settings/qos_output.hpp"

namespace rocehil::preflight {
namespace {

std::string sample(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data/probe" / name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of the section "@@ TOOL NETDEV" of a probe sample.
std::string section(const std::string& text, const std::string& header) {
  std::istringstream in(text);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("@@ ")) {
      inside = line == header;
      continue;
    }
    if (inside) out += line + "\n";
  }
  return out;
}

std::string canonical(const std::array<bool, 8>& on) {
  std::string out;
  for (int p = 0; p < 8; ++p)
    if (on[p]) out += (out.empty() ? "" : ",") + std::to_string(p);
  return out.empty() ? "none" : out;
}

TEST(QosReaders, TheProbeAndTheSettingsReadTheSamePfcAndTrust) {
  int compared = 0;
  for (const std::string name : {"connectx_host.txt", "connectx_healthy.txt"}) {
    const std::string text = sample(name);
    for (const NetdevFacts& n : parse_probe_output(text).netdevs) {
      if (!n.pfc) continue;
      SCOPED_TRACE(name + " " + n.name);
      const std::string out = section(text, "@@ " + n.pfc_source + " " + n.name);
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
