#include "help/command_tree.hpp"

#include <fmt/format.h>

#include <string>

#include "capture/analyze_command.hpp"
#include "capture/capture_command.hpp"
#include "capture/inject_command.hpp"
#include "fabric/inventory_command.hpp"
#include "fabric/settings_command.hpp"
#include "fabric/switches_command.hpp"
#include "help/manual_command.hpp"
#include "history/history_command.hpp"
#include "history/report_command.hpp"
#include "runs/bisect_command.hpp"
#include "runs/calibrate_command.hpp"
#include "runs/run_command.hpp"
#include "runs/selftest_command.hpp"
#include "runs/suite_command.hpp"
#include "testbed/testbed_command.hpp"
#include "traffic/agent_command.hpp"
#include "traffic/traffic_command.hpp"

namespace rocehil::cli {

void add_commands(CLI::App& app, int& exit_code) {
  app.description(
      "rocehil: hardware-in-the-loop qualification of RoCEv2 fabrics. It drives collective-shaped\n"
      "verbs traffic between GPU hosts, captures CNP and PFC frames from switch mirror ports and\n"
      "grades the fabric against a suite's thresholds.");
  app.name("rocehil");
  app.set_version_flag("--version", std::string("rocehil ") + ROCEHIL_VERSION);
  app.require_subcommand(1);
  app.footer(
      "\nStart with 'make demo' in the source tree, or 'rocehil analyze FILE' on a mirror "
      "capture.\n"
      "Run 'rocehil COMMAND --help' for a command's options and examples; 'man rocehil' has\n"
      "them all in one page (installed by the package or 'make install'; 'rocehil man-page'\n"
      "prints it from this binary: rocehil man-page | man -l -).\n"
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

  add_analyze_command(app, exit_code);
  add_testbed_command(app, exit_code);
  add_traffic_command(app, exit_code);
  add_agent_command(app, exit_code);
  add_capture_command(app, exit_code);
  add_inject_command(app, exit_code);
  add_inventory_command(app, exit_code);
  add_switches_command(app, exit_code);
  add_suite_command(app, exit_code);
  add_settings_command(app, exit_code);
  add_run_command(app, exit_code);
  add_history_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_trend_command(app, exit_code);
  add_export_command(app, exit_code);
  add_report_command(app, exit_code);
  add_bisect_command(app, exit_code);
  add_selftest_command(app, exit_code);
  add_calibrate_command(app, exit_code);
  add_manual_commands(app, exit_code);
}

}  // namespace rocehil::cli
