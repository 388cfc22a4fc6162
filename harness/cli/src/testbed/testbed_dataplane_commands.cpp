#include "testbed/testbed_dataplane_commands.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/daemon.hpp"
#include "rocehil/testbed/guest_nic.hpp"
#include "rocehil/testbed/switchd.hpp"

namespace rocehil::cli {

namespace {

using Runner = std::function<int(const std::string& netns, const std::string& config,
                                 const std::function<void(std::string_view)>& log)>;

// One daemon in a testbed namespace: detached (pid file) unless --foreground, a line per event
// in its log.
void add_daemon(CLI::App* testbed, int& exit_code, const std::string& name,
                const std::string& description, const std::string& netns_help,
                const std::string& config_help, Runner runner) {
  struct Options {
    std::string netns, config, pid_file, log_file;
    bool foreground = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = testbed->add_subcommand(name, description);
  cmd->group("");
  cmd->add_option("--netns", o->netns, netns_help)->required();
  cmd->add_option("--config", o->config, config_help)->required();
  cmd->add_option("--pid-file", o->pid_file, "Where the detached process writes its pid");
  cmd->add_option("--log", o->log_file, "Where it writes a line per event");
  cmd->add_flag("--foreground", o->foreground, "Do not detach; stop on SIGINT or SIGTERM");
  cmd->callback([o, &exit_code, runner] {
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
      exit_code = runner(o->netns, o->config, write_line);
    } catch (const Error& error) {
      write_line(error.what());
      throw;
    }
  });
}

}  // namespace

void add_dataplane_commands(CLI::App* testbed, int& exit_code) {
  add_daemon(testbed, exit_code, "switchd",
             "A lossless switch's forwarding process: per-class queues, ECN, PFC, watchdog",
             "The switch's namespace, rocehil-ID-NAME",
             "Its ports and knobs, as up --lossless writes them", testbed::run_switchd);
  add_daemon(testbed, exit_code, "guest-nic",
             "A --vm guest's NIC on a lossless fabric: priority queues, PFC obeyed, the guest "
             "held back",
             "The host's namespace, rocehil-ID-NAME",
             "Its port, QEMU's socket, rate and PFC priorities, as up --vm --lossless writes them",
             testbed::run_guest_nic);
}

}  // namespace rocehil::cli
