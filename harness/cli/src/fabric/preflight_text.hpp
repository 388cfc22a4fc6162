#pragma once

#include <string>

#include "rocehil/preflight/preflight.hpp"

namespace rocehil::cli {

// A table for people: one row per host (HOST ADDRESS VERDICT SSH AGENT RDMA MTU PFC ECN FIRMWARE),
// then every warn and fail item spelled out under it, then a one-line summary.
std::string render_check_text(const preflight::CheckReport& report);

}  // namespace rocehil::cli
