#pragma once

// The testbed's switches as a run reaches their settings: when the inventory is the one a
// testbed wrote (DIR/inventory.yaml beside DIR/testbed.json), its ECN marking and shaping.

#include <optional>
#include <string>
#include <string_view>

#include "rocehil/run/fabric_settings.hpp"

namespace rocehil::cli {

// The name the testbed's switches go by in a run's settings and their journal: "testbed-ID".
std::string testbed_switches_name(std::string_view id);

// Unset when no testbed state sits beside `inventory_file`.
std::optional<run::FabricLinkAccess> testbed_links_for(const std::string& inventory_file);

}  // namespace rocehil::cli
