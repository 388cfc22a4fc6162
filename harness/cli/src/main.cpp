// rocehil: qualify RoCEv2 fabrics for GPU training clusters.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <string_view>

#include "agent_command.hpp"
#include "analyze_command.hpp"
#include "bisect_command.hpp"
#include "calibrate_command.hpp"
#include "capture_command.hpp"
#include "history_command.hpp"
#include "inject_command.hpp"
#include "inventory_command.hpp"
#include "report_command.hpp"
#include "rocehil/common/error.hpp"
#include "run_command.hpp"
#include "selftest_command.hpp"
#include "suite_command.hpp"
#include "testbed_command.hpp"
#include "traffic_command.hpp"

int main(int argc, char** argv) {
  CLI::App app(
      "rocehil: hardware-in-the-loop qualification of RoCEv2 fabrics. It drives collective-shaped\n"
      "verbs traffic between GPU hosts, captures CNP and PFC frames from switch mirror ports and\n"
      "grades the fabric against a suite's thresholds.",
      "rocehil");
  app.set_version_flag("--version", std::string("rocehil ") + ROCEHIL_VERSION);
  app.require_subcommand(1);
  app.footer(
      "\nStart with 'make demo' in the source tree, or 'rocehil analyze FILE' on a mirror "
      "capture.\n"
      "Run 'rocehil COMMAND --help' for a command's options and examples.\n"
      "Exit codes: 0 qualified/ok, 1 a threshold failed, 2 bad usage or input, 3 infrastructure.");

  // Usage errors as one line, like every other error, with the way to the help that fixes them.
  app.failure_message([](const CLI::App* root, const CLI::Error& e) {
    std::string command = "rocehil";
    for (const CLI::App* a = root; !a->get_subcommands().empty();) {
      a = a->get_subcommands().front();
      command += " " + a->get_name();
    }
    return fmt::format("rocehil: error: {} (see '{} --help')\n", e.what(), command);
  });

  int exit_code = 0;
  rocehil::cli::add_analyze_command(app, exit_code);
  rocehil::cli::add_testbed_command(app, exit_code);
  rocehil::cli::add_traffic_command(app, exit_code);
  rocehil::cli::add_agent_command(app, exit_code);
  rocehil::cli::add_capture_command(app, exit_code);
  rocehil::cli::add_inject_command(app, exit_code);
  rocehil::cli::add_inventory_command(app, exit_code);
  rocehil::cli::add_suite_command(app, exit_code);
  rocehil::cli::add_run_command(app, exit_code);
  rocehil::cli::add_history_command(app, exit_code);
  rocehil::cli::add_compare_command(app, exit_code);
  rocehil::cli::add_export_command(app, exit_code);
  rocehil::cli::add_report_command(app, exit_code);
  rocehil::cli::add_bisect_command(app, exit_code);
  rocehil::cli::add_selftest_command(app, exit_code);
  rocehil::cli::add_calibrate_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int cli_code = app.exit(e);
    return cli_code == 0 ? 0 : static_cast<int>(rocehil::ExitCode::bad_input);
  } catch (const rocehil::Error& e) {
    std::fflush(stdout);
    // One line per problem (an inventory can have many), each marked as an error.
    std::string_view rest = e.what();
    do {
      const auto nl = rest.find('\n');
      fmt::print(stderr, "rocehil: error: {}\n", rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    } while (!rest.empty());
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "rocehil: error: out of memory\n");
    return static_cast<int>(rocehil::ExitCode::infrastructure);
  }
  return exit_code;
}
