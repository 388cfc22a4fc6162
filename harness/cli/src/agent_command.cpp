#include "agent_command.hpp"

#include "rocehil/agent/stdio_loop.hpp"

namespace rocehil::cli {

void add_agent_command(CLI::App& app, int& exit_code) {
  CLI::App* agent = app.add_subcommand(
      "agent",
      "Run traffic for a controller: JSON lines on stdin, replies on stdout (started over ssh by "
      "'rocehil run' and 'rocehil traffic client'; no port is opened).");
  agent->footer(R"(
Protocol (version 1), one JSON object per line; "id" is copied into the replies:
  {"v":1,"op":"hello","id":1}                      -> hello: version, providers, devices
  {"v":1,"op":"setup","id":2,"address":"198.18.1.11","workload":"bw","role":"server","qps":2}
                                                   -> setup: one endpoint per QP
  {"v":1,"op":"connect","id":3,"peers":[...]}      -> connected
  {"v":1,"op":"start","id":4,"seconds":5}          -> started, stats..., results
  {"v":1,"op":"stop","id":5}                       -> results
A bad line gets {"op":"error","error":"..."} and the agent reads on; when stdin closes it stops
its traffic and exits. Try it: printf '{"v":1,"op":"hello"}\n' | rocehil agent)");
  agent->callback([&exit_code] { exit_code = agent::run_agent_stdio(0, 1, ROCEHIL_VERSION); });
}

}  // namespace rocehil::cli
