#include "rocehil/switches/oid.hpp"

#include <algorithm>
#include <charconv>

#include "rocehil/switches/varbind.hpp"

namespace rocehil::switches {

std::string to_string(const Oid& oid) {
  std::string out;
  for (std::size_t i = 0; i < oid.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(oid[i]);
  }
  return out;
}

std::optional<Oid> parse_oid(std::string_view text) {
  if (!text.empty() && text.front() == '.') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  Oid oid;
  while (true) {
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    oid.push_back(n);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (text.empty()) return oid;
    if (text.front() != '.' || text.size() == 1) return std::nullopt;
    text.remove_prefix(1);
  }
}

bool starts_with(const Oid& oid, const Oid& prefix) {
  return oid.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), oid.begin());
}

Oid index_after(const Oid& oid, const Oid& prefix) {
  return Oid(oid.begin() + static_cast<std::ptrdiff_t>(std::min(prefix.size(), oid.size())),
             oid.end());
}

bool is_count(const Value& v) {
  switch (v.type) {
    case Value::Type::counter32:
    case Value::Type::counter64:
    case Value::Type::gauge32:
    case Value::Type::timeticks: return true;
    default: return false;
  }
}

int width_bits(const Value& v) {
  return v.type == Value::Type::counter64 ? 64 : 32;
}

}  // namespace rocehil::switches
