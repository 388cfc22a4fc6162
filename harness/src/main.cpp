// rocehil: qualify RoCEv2 fabrics for GPU training clusters.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <string_view>

#include "rocehil/common/error.hpp"
#include "rocehil/harness/agent_command.hpp"
#include "rocehil/harness/analyze_command.hpp"
#include "rocehil/harness/bisect_command.hpp"
#include "rocehil/harness/capture_command.hpp"
#include "rocehil/harness/history_command.hpp"
#include "rocehil/harness/inject_command.hpp"
#include "rocehil/harness/inventory_command.hpp"
#include "rocehil/harness/report_command.hpp"
#include "rocehil/harness/run_command.hpp"
#include "rocehil/harness/selftest_command.hpp"
#include "rocehil/harness/suite_command.hpp"
#include "rocehil/harness/testbed_command.hpp"
#include "rocehil/harness/traffic_command.hpp"

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
  rocehil::harness::add_analyze_command(app, exit_code);
  rocehil::harness::add_testbed_command(app, exit_code);
  rocehil::harness::add_traffic_command(app, exit_code);
  rocehil::harness::add_agent_command(app, exit_code);
  rocehil::harness::add_capture_command(app, exit_code);
  rocehil::harness::add_inject_command(app, exit_code);
  rocehil::harness::add_inventory_command(app, exit_code);
  rocehil::harness::add_suite_command(app, exit_code);
  rocehil::harness::add_run_command(app, exit_code);
  rocehil::harness::add_history_command(app, exit_code);
  rocehil::harness::add_compare_command(app, exit_code);
  rocehil::harness::add_export_command(app, exit_code);
  rocehil::harness::add_report_command(app, exit_code);
  rocehil::harness::add_bisect_command(app, exit_code);
  rocehil::harness::add_selftest_command(app, exit_code);

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
