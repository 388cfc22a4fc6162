// Reading an inventory: YAML in, a validated Inventory or every problem out, sorted by place.
#include "rocehil/inventory/load.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "loader.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::inventory {

namespace {

constexpr std::size_t max_text = std::size_t{64} << 20;
constexpr int max_nesting = 64;

bool nesting_too_deep(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    if (c == '[' || c == '{') {
      if (++depth > max_nesting) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

std::string to_string(const Diagnostic& d) {
  return fmt::format("{}:{}:{}: {}", d.file, d.line, d.column, d.message);
}

LoadResult parse_inventory(std::string_view text, const std::string& file) {
  LoadContext ctx(file);
  LoadResult result;
  if (text.size() > max_text) {
    ctx.error(SourceLocation{1, 1}, "the file is larger than 64 MiB; split the inventory");
  } else if (nesting_too_deep(text)) {
    ctx.error(
        SourceLocation{1, 1},
        fmt::format("brackets nest deeper than {} levels; an inventory needs a few", max_nesting));
  } else {
    try {
      const YAML::Node root = YAML::Load(std::string(text));
      if (!root.IsDefined() || root.IsNull())
        ctx.error(SourceLocation{1, 1},
                  "the inventory is empty; start with 'schema_version: 1' "
                  "and a 'hosts:' list (docs/inventory.md has an example)");
      else
        result.inventory = detail::Loader(ctx).load(root);
    } catch (const YAML::Exception& e) {
      const SourceLocation at = e.mark.is_null()
                                    ? SourceLocation{1, 1}
                                    : SourceLocation{e.mark.line + 1, e.mark.column + 1};
      ctx.error(at, fmt::format("YAML syntax error: {}; fix the indentation or quoting there",
                                shown(e.msg)));
      result.inventory.reset();
    }
  }
  result.diagnostics = ctx.take();
  if (!result.diagnostics.empty()) result.inventory.reset();
  if (result.inventory) result.inventory->file = file;
  return result;
}

LoadResult parse_inventory_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw input_error(
        fmt::format("cannot read inventory '{}': {}; check the path", file, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_inventory(text.str(), file);
}

Inventory load_inventory(const std::string& file) {
  LoadResult result = parse_inventory_file(file);
  if (result.inventory) return std::move(*result.inventory);
  std::string message;
  for (const auto& d : result.diagnostics) {
    if (!message.empty()) message += '\n';
    message += to_string(d);
  }
  message += fmt::format("\n{}: {} {}; nothing was run", file, result.diagnostics.size(),
                         result.diagnostics.size() == 1 ? "error" : "errors");
  throw input_error(message);
}

}  // namespace rocehil::inventory
