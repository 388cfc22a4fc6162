#include "rocehil/inventory/yaml_reader.hpp"

#include <fmt/format.h>

namespace rocehil::inventory {

std::string shown(std::string_view value, std::size_t limit) {
  std::string out;
  for (const char c : value) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else if (u >= 0x80)
      out += '?';
    else
      out += c;
  }
  return out;
}

}  // namespace rocehil::inventory
