#pragma once

#include <string>
#include <variant>
#include <vector>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::remote {

// A host the run expects to dial in, as the inventory has it.
struct ExpectedHost {
  std::string name;
  std::vector<std::string> addresses;  // its NICs' addresses
  // The inventory's address of the host (how it is reached), when it is an IP: what identifies
  // a host with no NICs (a capture host on a mirror port) when no NIC address does.
  std::string management{};
};

// Which inventory host a dialed-in agent is: the name its hello gives (its launcher's --as, or
// the host's own name), else the one host whose NIC addresses the agent has (an agent started
// by pdsh or systemd knows the host's name, not the inventory's). An agent that names an
// inventory host but has addresses and none of that host's is refused: it was started with the
// wrong --as, and its traffic would leave from another host than the report says.
struct AgentRefusal {
  std::string why;  // one line for the run's log
};
std::variant<std::string, AgentRefusal> identify_agent(const agent::HelloReply& hello,
                                                       const std::vector<ExpectedHost>& expected);

}  // namespace rocehil::remote
