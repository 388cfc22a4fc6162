#include "traffic/agent_command.hpp"

#include <cstdlib>
#include <memory>

#include "rocehil/agent/dial_home.hpp"
#include "rocehil/agent/stdio_loop.hpp"
#include "rocehil/channel/run_secret.hpp"

namespace rocehil::cli {

void add_agent_command(CLI::App& app, int& exit_code) {
  CLI::App* agent = app.add_subcommand(
      "agent",
      "Run traffic for a controller: JSON lines on stdin, replies on stdout (started over ssh by "
      "'rocehil run' and 'rocehil traffic client'; no port is opened), or over a TLS connection "
      "it dials (--connect).");
  auto connect = std::make_shared<std::string>();
  auto run_id = std::make_shared<std::string>();
  agent->add_option("--connect", *connect,
                    "Dial the controller at ADDRESS:PORT instead of reading stdin: TLS 1.3 on the "
                    "run's secret, which comes from ROCEHIL_RUN_SECRET or stdin's first line "
                    "(never the command line)");
  auto host_name = std::make_shared<std::string>();
  auto detach = std::make_shared<bool>(false);
  auto secret_file = std::make_shared<std::string>();
  auto wait_s = std::make_shared<double>(0);
  agent->add_option("--run-id", *run_id, "The run this agent belongs to (with --connect)");
  agent->add_option("--as", *host_name,
                    "The inventory's name for this host, which its hello gives (with --connect; "
                    "default: SLURMD_NODENAME in a Slurm step, else the host name, matched to the "
                    "inventory by name, else by its NICs' addresses)");
  agent->add_option("--secret-file", *secret_file,
                    "With --connect: read the key from this file (mode 0600; its first line, 64 "
                    "hex digits) instead of the environment or stdin: for agents started by "
                    "pdsh, clush, systemd or a DaemonSet, which join a controller whose "
                    "inventory says 'agents: external'");
  agent
      ->add_option("--wait", *wait_s,
                   "With --connect: keep trying this many seconds while the controller is not "
                   "listening yet (agents started before the run: pdsh, systemd)")
      ->check(CLI::Range(0.0, 86400.0));
  agent->add_flag("--detach", *detach,
                  "With --connect: go on in the background and return once joined (exit 0), or "
                  "say why not (exit 3); what ssh, pdsh or clush run to start a run's agents");
  agent->footer(R"(
Protocol (version 1), one JSON object per line; "id" is copied into the replies:
  {"v":1,"op":"hello","id":1}                      -> hello: version, providers, devices
  {"v":1,"op":"setup","id":2,"address":"198.18.1.11","workload":"bw","role":"server","qps":2}
                                                   -> setup: one endpoint per QP
  {"v":1,"op":"connect","id":3,"peers":[...]}      -> connected
  {"v":1,"op":"start","id":4,"seconds":5}          -> started, stats..., results
  {"v":1,"op":"stop","id":5}                       -> results
A bad line gets {"op":"error","error":"..."} and the agent reads on; when stdin closes it stops
its traffic and exits. Try it: printf '{"v":1,"op":"hello"}\n' | rocehil agent

Dialing home (--connect ADDRESS:PORT --run-id ID [--as HOST]): the same protocol over TLS 1.3
whose key is the run's secret, so only the run's controller can command the agent and only the
run's agents can join. One connection carries a session per rank or capture ("session":N in
every line; "end" closes one), so one agent per host serves the whole run. When the controller
goes, the agent stops its traffic, puts back what it set, and exits. An agent that cannot
connect or is refused exits 3 saying so.)");
  agent->callback([&exit_code, connect, run_id, host_name, detach, secret_file, wait_s, agent] {
    if (connect->empty()) {
      if (agent->count("--run-id") > 0)
        throw CLI::ValidationError("--run-id", "goes with --connect (a dialing agent's run)");
      if (*detach) throw CLI::ValidationError("--detach", "goes with --connect (a dialing agent)");
      if (!secret_file->empty())
        throw CLI::ValidationError("--secret-file", "goes with --connect (a dialing agent)");
      if (agent->count("--as") > 0)
        throw CLI::ValidationError("--as", "goes with --connect (the name a dialing agent gives)");
      exit_code = agent::run_agent_stdio(0, 1, ROCEHIL_VERSION);
      return;
    }
    if (run_id->empty())
      throw CLI::ValidationError("--run-id", "is required with --connect: the run to join");
    agent::DialOptions options;
    agent::parse_connect_address(*connect, options);
    options.run_id = *run_id;
    options.host_name = *host_name;
    options.retry_for = std::chrono::milliseconds(static_cast<std::int64_t>(*wait_s * 1000));
    // A task of a Slurm step (one step starts every host's agent) knows its node's name.
    if (const char* node = std::getenv("SLURMD_NODENAME"); options.host_name.empty() && node)
      options.host_name = node;
    const channel::RunSecret secret =
        secret_file->empty() ? agent::read_run_secret(0) : channel::read_secret_file(*secret_file);
    exit_code = *detach ? agent::start_detached_agent(options, secret, ROCEHIL_VERSION)
                        : agent::run_agent_dialing(options, secret, ROCEHIL_VERSION);
  });
}

}  // namespace rocehil::cli
