#include "rocehil/common/file_safe_name.hpp"

namespace rocehil {

std::string file_safe_name(std::string_view name, char replacement, std::string_view also_kept) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-' ||
                      also_kept.find(c) != std::string_view::npos;
    out += kept ? c : replacement;
  }
  if (out.empty()) return "_";
  if (out.front() == '.' || out.front() == '-') out.front() = '_';
  return out;
}

}  // namespace rocehil
