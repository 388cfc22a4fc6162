#include "help/manual_command.hpp"

#include <fmt/format.h>

#include <ctime>
#include <memory>
#include <string>

#include "help/command_tree.hpp"
#include "help/manual.hpp"

namespace rocehil::cli {

namespace {

// The command tree as it is before parsing: once parsed, CLI11's help() of a command answers
// with the help of the subcommand that was run (this one).
std::unique_ptr<CLI::App> unparsed_tree() {
  auto app = std::make_unique<CLI::App>();
  static int ignored = 0;
  add_commands(*app, ignored);
  return app;
}

}  // namespace

void add_manual_commands(CLI::App& app, int& exit_code) {
  auto date = std::make_shared<std::string>();
  CLI::App* man =
      app.add_subcommand("man-page", "Print rocehil(1), generated from every --help")->group("");
  man->add_option(
      "--date", *date,
      "The date the page carries, YYYY-MM-DD (default: today; the build passes its own)");
  man->callback([date, &exit_code] {
    if (date->empty()) {  // today, UTC
      const std::time_t now = std::time(nullptr);
      std::tm utc{};
      gmtime_r(&now, &utc);
      char text[16];
      std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
      *date = text;
    }
    fmt::print("{}", man_page(*unparsed_tree(), ROCEHIL_VERSION, *date));
    exit_code = 0;
  });
  CLI::App* completion =
      app.add_subcommand("completion", "Print a shell completion script")->group("");
  completion->require_subcommand(1);
  completion->add_subcommand("bash", "bash completion for rocehil")->callback([&exit_code] {
    fmt::print("{}", bash_completion(*unparsed_tree()));
    exit_code = 0;
  });
}

}  // namespace rocehil::cli
