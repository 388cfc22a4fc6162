#pragma once

#include <string>
#include <string_view>

#include "rocehil/run/selftest.hpp"

namespace rocehil::cli {

// The selftest's checklist for a terminal.
std::string render_selftest_text(const run::SelftestReport& report, std::string_view file);

}  // namespace rocehil::cli
