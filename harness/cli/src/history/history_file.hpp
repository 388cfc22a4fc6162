#pragma once

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "rocehil/common/error.hpp"
#include "rocehil/reports/history.hpp"

namespace rocehil::cli {

inline constexpr const char* default_history = "reports/history.db";

// Opening creates a database; a typo in the path must not read as an empty history.
inline reports::History open_existing_history(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw input_error(
        fmt::format("{}: no run history here (rocehil run writes it in its "
                    "--reports directory; give --db PATH)",
                    path));
  return reports::History::open(path);
}

}  // namespace rocehil::cli
