#include "cases/case_agents.hpp"

#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/remote/host_ssh.hpp"

namespace rocehil::run {

std::unique_ptr<remote::AgentLink> open_agent(const CaseContext& c, const inventory::Host& host,
                                              const std::string& name) {
  if (c.dialed != nullptr) return c.dialed->open_session(host.name, name);
  remote::AgentCommand command = remote::host_command(host, {host.agent, "agent"}, c.multiplex);
  command.name = name;
  return remote::launch_agent(command);
}

}  // namespace rocehil::run
