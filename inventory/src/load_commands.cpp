// Commands the inventory names for hosts and switches, and a switch's way to take a port down
// and up: what a suite's events run (docs/inventory.md, "Commands and link control").
#include <fmt/format.h>

#include "loader.hpp"
#include "rocehil/inventory/names.hpp"

namespace rocehil::inventory::detail {

namespace {

// A command line: one line of text, run by the remote shell as written.
std::optional<std::string> read_command_line(LoadContext& ctx, const YAML::Node& n,
                                             const std::string& what) {
  const auto text = read_string(ctx, n, what);
  if (!text) return std::nullopt;
  if (text->empty() || text->find_first_of("\n\r") != std::string::npos ||
      text->find('\0') != std::string::npos) {
    ctx.error(n, fmt::format("{} must be one non-empty line, e.g. 'sudo config interface "
                             "shutdown {{port}}'",
                             what));
    return std::nullopt;
  }
  return text;
}

}  // namespace

std::vector<NamedCommand> read_commands(LoadContext& ctx, const YAML::Node& node,
                                        const std::string& owner) {
  std::vector<NamedCommand> out;
  const std::string what = owner + ": commands";
  if (!node.IsMap()) {
    ctx.error(node, fmt::format("{} must be a map of names to command lines, e.g. 'drain: "
                                "\"sudo config qos reload\"'",
                                what));
    return out;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar() || !is_valid_name(it->first.Scalar())) {
      ctx.error(it->first, fmt::format("{}: a command's name may hold letters, digits and . _ - "
                                       "only",
                                       what));
      continue;
    }
    const std::string& name = it->first.Scalar();
    bool twice = false;
    for (const NamedCommand& c : out) twice = twice || c.name == name;
    if (twice) {
      ctx.error(it->first, fmt::format("{}: '{}' is named twice; keep one", what, name));
      continue;
    }
    if (const auto text = read_command_line(ctx, it->second, fmt::format("{}: {}", what, name)))
      out.push_back({name, *text, location_of(it->first)});
  }
  return out;
}

std::optional<std::string> read_port_command(LoadContext& ctx, const YAML::Node& node,
                                             const std::string& what) {
  auto text = read_command_line(ctx, node, what);
  if (!text) return std::nullopt;
  // Placeholders: {port} only, and it must be there (a command without it would act on the same
  // port whatever the link).
  bool has_port = false;
  for (std::size_t open = text->find('{'); open != std::string::npos;
       open = text->find('{', open + 1)) {
    const std::size_t close = text->find('}', open);
    const std::string_view word = close == std::string::npos
                                      ? std::string_view(*text).substr(open)
                                      : std::string_view(*text).substr(open, close - open + 1);
    if (word != "{port}") {
      ctx.error(node, fmt::format("{}: '{}' is not a placeholder rocehil fills; write {{port}} "
                                  "where the switch's port goes",
                                  what, shown(word)));
      return std::nullopt;
    }
    has_port = true;
  }
  if (!has_port) {
    ctx.error(node, fmt::format("{} has no {{port}}; write it where the port goes, e.g. 'sudo "
                                "config interface shutdown {{port}}'",
                                what));
    return std::nullopt;
  }
  return text;
}

void Loader::read_switch_control(const MapReader& m, const std::string& owner, Switch& s) {
  s.ssh = inv_.defaults.ssh;
  if (const auto n = m.get("ssh"); n.IsDefined()) {
    const auto defaults_options = s.ssh.options;
    s.ssh.options.clear();
    read_ssh(ctx_, n, owner, s.ssh);
    s.ssh.options.insert(s.ssh.options.begin(), defaults_options.begin(), defaults_options.end());
  }
  if (const auto n = m.get("link_down"); n.IsDefined())
    if (const auto v = read_port_command(ctx_, n, owner + ": link_down")) s.link_down = *v;
  if (const auto n = m.get("link_up"); n.IsDefined())
    if (const auto v = read_port_command(ctx_, n, owner + ": link_up")) s.link_up = *v;
  if (m.has("link_down") != m.has("link_up"))
    ctx_.error(m.node(), fmt::format("{}: give link_down and link_up together (a link taken down "
                                     "is brought up again)",
                                     owner));
  if (const auto n = m.get("commands"); n.IsDefined()) s.commands = read_commands(ctx_, n, owner);
}

}  // namespace rocehil::inventory::detail
