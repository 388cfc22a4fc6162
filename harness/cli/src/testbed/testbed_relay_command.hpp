#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil testbed mirror-relay`, the remote mirror relay `testbed up --mirror-mode erspan|
// erspan2|gre` starts in each spine (testbed/mirror_relay.hpp). Not for people: hidden from
// --help.
void add_mirror_relay_command(CLI::App* testbed, int& exit_code);

}  // namespace rocehil::cli
