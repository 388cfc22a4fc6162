#pragma once

#include <optional>
#include <string_view>

#include "rocehil/capture/frame_builder.hpp"

namespace rocehil::capture {

// "aa:bb:cc:dd:ee:ff" or "aa-bb-cc-dd-ee-ff", either case; nullopt for anything else. The one
// spelling of a spine port's MAC for the command line and the agent protocol alike.
std::optional<MacAddress> parse_mac_address(std::string_view text);

}  // namespace rocehil::capture
