#include "testbed/testbed_relay_command.hpp"

#include <CLI/CLI.hpp>
#include <memory>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/daemon.hpp"
#include "rocehil/testbed/mirror_relay.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

void add_mirror_relay_command(CLI::App* testbed, int& exit_code) {
  struct Options {
    testbed::RelayOptions relay;
    std::string mode;
    std::string pid_file;
    bool foreground = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = testbed->add_subcommand(
      "mirror-relay",
      "A spine's remote mirror session: reads the copies tc mirred sends to INTERFACE, wraps "
      "each in GRE/ERSPAN and sends it with a raw IPv4 socket from SOURCE to DESTINATION");
  cmd->group("");
  cmd->add_option("--netns", o->relay.netns, "The spine's namespace, rocehil-ID-NAME")->required();
  cmd->add_option("--mode", o->mode, "erspan (type III), erspan2 (type II) or gre")->required();
  cmd->add_option("--session", o->relay.session, "ERSPAN session ID and GRE key, 0-1023")
      ->required();
  cmd->add_option("--source", o->relay.source, "The spine's management address")->required();
  cmd->add_option("--destination", o->relay.destination, "The collector's address")->required();
  cmd->add_option("--interface", o->relay.interface, "Where the copies arrive")->required();
  cmd->add_option("--port", o->relay.ports,
                  "A mirrored port, to tell each copy's port index (repeat for each)");
  cmd->add_option("--truncate", o->relay.truncate, "Bytes of each frame kept, 0: all that fits")
      ->capture_default_str();
  cmd->add_option("--pid-file", o->pid_file, "Where the detached relay writes its pid");
  cmd->add_option("--counters-file", o->relay.counters_file,
                  "JSON counters, rewritten every second");
  cmd->add_flag("--foreground", o->foreground, "Do not detach; stop on SIGINT or SIGTERM");
  cmd->callback([o, &exit_code] {
    o->relay.mode = testbed::parse_mirror_mode(o->mode);
    if (!o->foreground && o->pid_file.empty())
      throw input_error(
          "give --pid-file FILE (where the detached relay writes its pid) or "
          "--foreground");
    // Opened before detaching, so that `up` sees why a relay cannot start.
    testbed::MirrorRelay relay(o->relay);
    if (!o->foreground && !testbed::detach_daemon(o->pid_file)) {
      exit_code = 0;
      return;
    }
    relay.run(catch_interrupts());
    exit_code = 0;
  });
}

}  // namespace rocehil::cli
