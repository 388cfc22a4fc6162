#include "testbed_switchd_command.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/daemon.hpp"
#include "rocehil/testbed/switchd.hpp"

namespace rocehil::cli {

void add_switchd_command(CLI::App* testbed, int& exit_code) {
  struct Options {
    std::string netns, config, pid_file, log_file;
    bool foreground = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = testbed->add_subcommand(
      "switchd", "A lossless switch's forwarding process: per-class queues, ECN, PFC, watchdog");
  cmd->group("");
  cmd->add_option("--netns", o->netns, "The switch's namespace, rocehil-ID-NAME")->required();
  cmd->add_option("--config", o->config, "Its ports and knobs, as up --lossless writes them")
      ->required();
  cmd->add_option("--pid-file", o->pid_file, "Where the detached process writes its pid");
  cmd->add_option("--log", o->log_file, "Where it writes a line per event (start, storms)");
  cmd->add_flag("--foreground", o->foreground, "Do not detach; stop on SIGINT or SIGTERM");
  cmd->callback([o, &exit_code] {
    if (!o->foreground && o->pid_file.empty())
      throw input_error(
          "give --pid-file FILE (where the detached process writes its pid) or "
          "--foreground");
    if (!o->foreground && !testbed::detach_daemon(o->pid_file)) {
      exit_code = 0;
      return;
    }
    std::FILE* log = o->log_file.empty() ? stderr : std::fopen(o->log_file.c_str(), "a");
    if (log == nullptr) log = stderr;
    const auto write_line = [log](std::string_view line) {
      fmt::print(log, "{:%Y-%m-%dT%H:%M:%S} {}\n", std::chrono::system_clock::now(), line);
      std::fflush(log);
    };
    try {
      exit_code = testbed::run_switchd(o->netns, o->config, write_line);
    } catch (const Error& error) {
      write_line(error.what());
      throw;
    }
  });
}

}  // namespace rocehil::cli
