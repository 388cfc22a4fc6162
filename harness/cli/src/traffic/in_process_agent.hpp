#pragma once

#include <memory>
#include <string>

#include "rocehil/remote/agent_link.hpp"

namespace rocehil::cli {

// An agent session run in this process, reached through the same link as a remote one.
std::unique_ptr<remote::AgentLink> make_in_process_agent(std::string version);

}  // namespace rocehil::cli
