#pragma once

// Where a case's agents come from: a session on the agent its host dialed in with, when the run
// started one per host (the inventory's controller), else a process started for the case over
// the host's launcher and spoken to on stdio.

#include <memory>
#include <string>

#include "cases/case_attempt.hpp"
#include "rocehil/remote/agent_link.hpp"

namespace rocehil::run {

// An agent for `host`, named `name` in messages ("h3", "h3/eth1"). Throws rocehil::Error naming
// the host when it cannot.
std::unique_ptr<remote::AgentLink> open_agent(const CaseContext& c, const inventory::Host& host,
                                              const std::string& name);

}  // namespace rocehil::run
