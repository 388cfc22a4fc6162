#pragma once

#include <functional>
#include <string>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {

// How an agent hears its controller and answers it: a pipe pair (stdio, started over ssh or a
// Slurm step), or a TLS connection it dialed (dial_home.hpp). serve_controller() runs the same
// protocol over either.
class AgentTransport {
 public:
  virtual ~AgentTransport() = default;
  // A descriptor that is readable when read_available() has something to give (or the
  // controller has gone).
  virtual int poll_fd() const = 0;
  // Appends what has arrived to `out`; false once the controller has gone.
  virtual bool read_available(std::string& out) = 0;
  // Sends one whole line; false once the controller has gone.
  virtual bool write_line(const std::string& line) = 0;
};

struct ServeOptions {
  std::string host_name;  // what hello names this host (empty: its own name)
  // An agent that dialed its controller outlives no run: when the connection ends with settings
  // it applied still in force (the controller did not restore them: it was killed, or its host
  // or the network went), the agent puts them back from its journal before it exits. An agent
  // on stdio serves one request of a controller that restores with another agent: it must not.
  bool put_back_settings_when_gone = false;
  // An agent that dialed its controller: told whether the controller admitted it (the
  // controller's answer to its hello). Unset on stdio, where an admission is an error.
  std::function<void(const AdmissionRequest&)> on_admission = {};
};

// Serves one controller until it goes: one JSON request per line in, replies and events out
// (protocol.hpp), in as many sessions as it opens; then stops traffic and releases what every
// session holds. Returns the exit code.
int serve_controller(AgentTransport& transport, const std::string& version,
                     const ServeOptions& options = {});

}  // namespace rocehil::agent
