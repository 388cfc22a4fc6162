// `settings:` maps, in an inventory (what the fabric is declared to run with) and a suite (what a
// run sets): one reader, so both take the same names and values and report them alike.
#include <fmt/format.h>

#include "rocehil/common/error.hpp"
#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::inventory {

std::vector<settings::Assignment> read_settings_map(LoadContext& ctx, const YAML::Node& n,
                                                    std::string_view what) {
  std::vector<settings::Assignment> out;
  if (!n.IsMap()) {
    ctx.error(n, fmt::format("{} must be a map of setting: value, such as "
                             "'roce_rp.rpg_time_reset: 55' ('rocehil settings list' shows them)",
                             what));
    return out;
  }
  for (const auto& item : n) {
    const SourceLocation at = location_of(item.first);
    const std::string origin = fmt::format("{}:{}:{}", ctx.file(), at.line, at.column);
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string();
    std::string value;
    if (item.second.IsScalar()) {
      value = item.second.Scalar();
    } else if (item.second.IsSequence()) {  // priorities as a list: [3, 4]
      for (const auto& p : item.second) {
        if (!value.empty()) value += ',';
        value += p.IsScalar() ? p.Scalar() : std::string("?");
      }
      if (value.empty()) value = "none";
    } else {
      ctx.error(item.second,
                fmt::format("{}: {} needs a value, such as {}: 55", what, shown(key), shown(key)));
      continue;
    }
    try {
      out.push_back(settings::assign(key, value, origin));
    } catch (const Error& e) {
      // The message starts with the origin; the diagnostic gives its own.
      std::string text = e.what();
      if (text.starts_with(origin + ": ")) text.erase(0, origin.size() + 2);
      ctx.error(item.first, fmt::format("{}: {}", what, text));
    }
  }
  try {
    (void)settings::merge(out, {});  // a name given twice (YAML lets a map repeat a key)
  } catch (const Error& e) {
    ctx.error(n, fmt::format("{}: {}", what, e.what()));
  }
  return out;
}

}  // namespace rocehil::inventory
