#pragma once

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::run {

// A whole file as text; bad input naming the file and what it was for when it cannot be read.
inline std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(fmt::format("{}: cannot read the {} (check the path)", path, what));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace rocehil::run
