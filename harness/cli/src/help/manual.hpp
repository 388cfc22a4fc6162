#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rocehil::cli {

// What the package ships beside the binary, generated from the command tree itself (every
// command's --help), so that neither can drift from what rocehil takes.

// Every visible command below `root`, depth first, with its path ("rocehil traffic client").
struct CommandPath {
  std::string path;
  const CLI::App* app;
};
std::vector<CommandPath> visible_commands(const CLI::App& root);

// rocehil(1) in roff: NAME, SYNOPSIS, DESCRIPTION (the root's help), OPTIONS, COMMANDS (each
// command's synopsis, description, subcommands, options and footer, as its --help has them but
// filled by man to the reader's width), EXIT STATUS, FILES, SEE ALSO.
std::string man_page(const CLI::App& root, std::string_view version, std::string_view date);

// A bash completion script: at each command path, its subcommands and options.
std::string bash_completion(const CLI::App& root);

}  // namespace rocehil::cli
