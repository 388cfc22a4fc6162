// The lossless switches' knobs as two libraries know them: the settings catalogue (what --set,
// a suite and bisect check and write) and the testbed (what `testbed set` and the switches take).
// A value one takes and the other refuses would stop a run halfway, or let through what the
// switch cannot hold; a canonical form that differs would make every read-back a mismatch.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/settings/catalogue.hpp"
#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/switch_knobs.hpp"

namespace rocehil {
namespace {

bool testbed_takes(std::string_view name, std::string_view text) {
  testbed::SwitchKnobs k;
  // Room for kmin and kmax anywhere in their range: the pair's rule is the testbed's own.
  k.wred_kmin_kb = 1;
  k.wred_kmax_kb = 1'000'000;
  try {
    testbed::with_knob(k, name, text);
    return true;
  } catch (const Error&) {
    return false;
  }
}

bool catalogue_takes(const settings::Setting& s, std::string_view text) {
  try {
    settings::canonical_value(s, text);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(SwitchKnobSettings, EveryKnobIsInTheCatalogueWithTheTestbedsDefault) {
  const testbed::SwitchKnobs defaults;
  for (const auto name : testbed::knob_names()) {
    SCOPED_TRACE(std::string(name));
    const settings::Setting* s = settings::find(name);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->scope, settings::Scope::fabric_link);
    EXPECT_EQ(std::string(s->default_), testbed::knob_text(defaults, name));
  }
  // And every fabric_link setting is one `testbed set` takes.
  for (const settings::Setting& s : settings::catalogue()) {
    if (s.scope != settings::Scope::fabric_link) continue;
    const auto names = testbed::switch_setting_names();
    EXPECT_NE(std::find(names.begin(), names.end(), s.name), names.end()) << s.name;
  }
}

TEST(SwitchKnobSettings, RangesAgreeAtTheirEdges) {
  for (const auto name : testbed::knob_names()) {
    const settings::Setting& s = *settings::find(name);
    if (s.kind != settings::ValueKind::number) continue;
    SCOPED_TRACE(std::string(name));
    for (const auto v : {s.min - 1, s.min, s.max, s.max + 1}) {
      const std::string text = std::to_string(v);
      EXPECT_EQ(catalogue_takes(s, text), testbed_takes(name, text)) << text;
    }
  }
}

TEST(SwitchKnobSettings, TheCataloguesFormIsTheTestbedsReadBack) {
  const std::vector<std::pair<std::string_view, std::string_view>> values = {
      {"switch.pfc_priorities", "4,3"}, {"switch.pfc_priorities", "none"},
      {"switch.pfc_priorities", "3"},   {"switch.dscp_to_tc", "46:5,3:3"},
      {"switch.dscp_to_tc", "default"}, {"switch.ecn_enable", "0"},
      {"switch.xoff_kb", "300"}};
  for (const auto& [name, text] : values) {
    SCOPED_TRACE(std::string(name) + "=" + std::string(text));
    const std::string canonical = settings::canonical_value(*settings::find(name), text);
    // What the harness writes (canonical) reads back the same from the switches' knobs.
    EXPECT_EQ(testbed::knob_text(testbed::with_knob({}, name, canonical), name), canonical);
    EXPECT_EQ(testbed::knob_text(testbed::with_knob({}, name, text), name), canonical);
  }
  const settings::Setting& map = *settings::find("switch.dscp_to_tc");
  for (const char* bad : {"3:3,3:4", "64:1", "3:8", "3-3"}) {
    EXPECT_FALSE(catalogue_takes(map, bad)) << bad;
    EXPECT_FALSE(testbed_takes("switch.dscp_to_tc", bad)) << bad;
  }
}

}  // namespace
}  // namespace rocehil
