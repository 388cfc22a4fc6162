#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace rocehil::cli {

// "a,b,,c" -> {"a", "b", "c"}: a command-line list, empty entries dropped.
inline std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string word; std::getline(in, word, ',');)
    if (!word.empty()) out.push_back(word);
  return out;
}

}  // namespace rocehil::cli
