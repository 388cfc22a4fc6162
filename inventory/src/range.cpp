#include "rocehil/inventory/range.hpp"

#include <fmt/format.h>

#include <charconv>

#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::inventory {

namespace {

struct Bound {
  unsigned long value = 0;
  std::size_t width = 0;  // zero-padded width, 0 for none
  bool ok = false;
};

Bound parse_bound(std::string_view digits) {
  Bound b;
  if (digits.empty() || digits.size() > 9) return b;
  for (char c : digits)
    if (c < '0' || c > '9') return b;
  std::from_chars(digits.data(), digits.data() + digits.size(), b.value);
  b.width = digits.size() > 1 && digits.front() == '0' ? digits.size() : 0;
  b.ok = true;
  return b;
}

}  // namespace

RangeExpansion expand_range(std::string_view pattern, std::size_t limit) {
  RangeExpansion r;
  const auto open = pattern.find('[');
  const auto close_any = pattern.find(']');
  if (open == std::string_view::npos) {
    if (close_any != std::string_view::npos)
      r.error =
          fmt::format("'{}' has a ']' without '['; write a range as name[1-8]", shown(pattern));
    else
      r.values.emplace_back(pattern);
    return r;
  }
  r.had_range = true;
  const auto close = pattern.find(']', open);
  if (close == std::string_view::npos) {
    r.error = fmt::format("'{}' has a '[' without ']'; close the range, as in gpu[001-128]",
                          shown(pattern));
    return r;
  }
  const std::string_view prefix = pattern.substr(0, open);
  const std::string_view spec = pattern.substr(open + 1, close - open - 1);
  const std::string_view suffix = pattern.substr(close + 1);
  if (spec.find('[') != std::string_view::npos || prefix.find(']') != std::string_view::npos) {
    r.error =
        fmt::format("'{}' nests brackets; write one range, as in gpu[001-128]", shown(pattern));
    return r;
  }
  if (suffix.find_first_of("[]") != std::string_view::npos) {
    r.error = fmt::format(
        "'{}' has more than one range; use one range per value (write several "
        "entries for the rest)",
        shown(pattern));
    return r;
  }
  if (spec.empty()) {
    r.error = fmt::format("'{}' has an empty range; write the numbers, as in gpu[001-128]",
                          shown(pattern));
    return r;
  }
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    const std::string_view item = spec.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const auto dash = item.find('-');
    const Bound lo = parse_bound(item.substr(0, dash));
    const Bound hi = dash == std::string_view::npos ? lo : parse_bound(item.substr(dash + 1));
    if (!lo.ok || !hi.ok) {
      r.error = fmt::format(
          "'{}': '{}' is not a number or a range A-B of numbers; write the "
          "range as [001-128] or [1-4,7]",
          shown(pattern), shown(item));
      r.values.clear();
      return r;
    }
    if (hi.value < lo.value) {
      r.error = fmt::format("'{}': the range {} goes down; write the smaller number first",
                            shown(pattern), shown(item));
      r.values.clear();
      return r;
    }
    if (hi.value - lo.value + 1 > limit - std::min(limit, r.values.size())) {
      r.error = fmt::format("'{}' stands for more than {} values; split it into smaller ranges",
                            shown(pattern), limit);
      r.values.clear();
      return r;
    }
    for (unsigned long n = lo.value; n <= hi.value; ++n)
      r.values.push_back(fmt::format("{}{:0{}}{}", prefix, n, lo.width, suffix));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return r;
}

}  // namespace rocehil::inventory
