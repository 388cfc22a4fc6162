#pragma once

#include <CLI/CLI.hpp>

namespace rocehil::cli {

// `rocehil agent`: the agent protocol on stdin/stdout (rocehil/agent/protocol.hpp).
void add_agent_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
