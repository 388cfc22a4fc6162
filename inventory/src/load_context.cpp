#include "rocehil/inventory/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace rocehil::inventory {

namespace {

std::string_view kind_of(const YAML::Node& n) {
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "nothing";
  return "a single value";
}

}  // namespace

SourceLocation location_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

void LoadContext::error(const YAML::Node& at, std::string message) {
  error(location_of(at), std::move(message));
}

void LoadContext::error(SourceLocation at, std::string message) {
  diagnostics_.push_back({file_, at.line, at.column, std::move(message)});
}

std::vector<Diagnostic> LoadContext::take() {
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const auto& a, const auto& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  // One problem found on two paths is still one problem.
  diagnostics_.erase(std::unique(diagnostics_.begin(), diagnostics_.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.line == b.line && a.column == b.column &&
                                          a.message == b.message;
                                 }),
                     diagnostics_.end());
  return std::move(diagnostics_);
}

MapReader::MapReader(LoadContext& ctx, const YAML::Node& node, std::string what,
                     std::initializer_list<std::string_view> known)
    : ctx_(ctx), node_(node), what_(std::move(what)) {
  if (!node.IsMap()) {
    ctx.error(node, fmt::format("{} must be a map of keys and values, not {}; write 'key: value' "
                                "lines under it",
                                what_, kind_of(node)));
    return;
  }
  ok_ = true;
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      ctx.error(it->first, fmt::format("a key in {} is not a name; keys are plain words", what_));
      continue;
    }
    const std::string& key = it->first.Scalar();
    if (!seen.insert(key).second)
      ctx.error(it->first,
                fmt::format("key '{}' appears twice in {}; keep one", shown(key), what_));
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string_view best;
    std::size_t best_distance = 3;
    for (const std::string_view k : known)
      if (const std::size_t d = edit_distance(key, k); d < best_distance) {
        best = k;
        best_distance = d;
      }
    std::string valid;
    for (const std::string_view k : known) valid += (valid.empty() ? "" : ", ") + std::string(k);
    if (!best.empty())
      ctx.error(it->first,
                fmt::format("unknown key '{}' in {}; did you mean '{}'?", shown(key), what_, best));
    else
      ctx.error(it->first,
                fmt::format("unknown key '{}' in {}; valid keys: {}", shown(key), what_, valid));
  }
}

YAML::Node MapReader::get(std::string_view key) const {
  if (!ok_) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node MapReader::require(std::string_view key, std::string_view example) const {
  YAML::Node value = get(key);
  if (ok_ && !value.IsDefined())
    ctx_.error(node_,
               fmt::format("{} has no '{}'; add one, e.g. '{}: {}'", what_, key, key, example));
  return value;
}

std::optional<std::string> read_string(LoadContext& ctx, const YAML::Node& n,
                                       std::string_view what) {
  if (!n.IsScalar()) {
    ctx.error(n, fmt::format("{} must be a single value, not {}", what, kind_of(n)));
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<long> read_int(LoadContext& ctx, const YAML::Node& n, std::string_view what, long lo,
                             long hi, std::string_view example) {
  const auto fail = [&](std::string_view got) {
    ctx.error(n, fmt::format("{} must be an integer from {} to {}, got {}; write a number such "
                             "as {}",
                             what, lo, hi, got, example));
    return std::nullopt;
  };
  if (!n.IsScalar()) return fail(kind_of(n));
  const std::string& s = n.Scalar();
  long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    return fail(fmt::format("'{}'", shown(s)));
  if (value < lo || value > hi) {
    ctx.error(n, fmt::format("{} {} is out of range; use {}-{}", what, value, lo, hi));
    return std::nullopt;
  }
  return value;
}

std::optional<double> read_number(LoadContext& ctx, const YAML::Node& n, std::string_view what,
                                  double lo, double hi) {
  const auto fail = [&](std::string_view got) {
    ctx.error(
        n, fmt::format("{} must be a number from {:.12g} to {:.12g}, got {}", what, lo, hi, got));
    return std::nullopt;
  };
  if (!n.IsScalar()) return fail(kind_of(n));
  const std::string& s = n.Scalar();
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(value))
    return fail(fmt::format("'{}'", shown(s)));
  if (value < lo || value > hi) return fail(fmt::format("{:g}", value));
  return value;
}

std::optional<std::vector<std::string>> read_string_list(LoadContext& ctx, const YAML::Node& n,
                                                         std::string_view what) {
  if (!n.IsSequence()) {
    ctx.error(n, fmt::format("{} must be a list such as [a, b], not {}", what, kind_of(n)));
    return std::nullopt;
  }
  std::vector<std::string> values;
  bool ok = true;
  for (const auto& item : n) {
    if (!item.IsScalar()) {
      ctx.error(item, fmt::format("{} must list single values, not {}", what, kind_of(item)));
      ok = false;
      continue;
    }
    values.push_back(item.Scalar());
  }
  if (!ok) return std::nullopt;
  return values;
}

std::optional<std::string> read_choice(LoadContext& ctx, const YAML::Node& n, std::string_view what,
                                       std::initializer_list<std::string_view> choices) {
  const auto s = read_string(ctx, n, what);
  if (!s) return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
  std::string list;
  for (const std::string_view c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  ctx.error(n, fmt::format("{} '{}' is not one of {}; use one of them", what, shown(*s), list));
  return std::nullopt;
}

}  // namespace rocehil::inventory
