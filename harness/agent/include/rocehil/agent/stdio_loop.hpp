#pragma once

#include <string>

namespace rocehil::agent {

// Serves one controller on the two descriptors until `in_fd` closes: one JSON request per line
// in, replies and events out (protocol.hpp). Returns the exit code. `rocehil agent` and
// `rocehil traffic server` both run it on stdin and stdout.
int run_agent_stdio(int in_fd, int out_fd, const std::string& version);

}  // namespace rocehil::agent
