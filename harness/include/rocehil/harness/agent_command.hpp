#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace rocehil::harness {

// `rocehil agent`: the agent protocol on stdin/stdout (agent_protocol.hpp).
void add_agent_command(CLI::App& app, int& exit_code);

// Serves one controller on the two descriptors until `in_fd` closes; returns the exit code.
// `traffic server` runs the same loop.
int run_agent_stdio(int in_fd, int out_fd, const std::string& version);

}  // namespace rocehil::harness
