// Which inventory host a dialed-in agent is, from its hello: by name, else by NIC addresses.
#include "rocehil/remote/agent_identity.hpp"

#include <gtest/gtest.h>

namespace rocehil::remote {
namespace {

agent::HelloReply hello(std::string host, std::vector<std::string> addresses) {
  agent::HelloReply h;
  h.host = std::move(host);
  if (!addresses.empty())
    h.devices.push_back(
        {.name = "soft", .provider = "soft", .addresses = std::move(addresses), .detail = {}});
  return h;
}

const std::vector<ExpectedHost> inventory = {
    {"h1", {"198.18.1.11"}},
    {"h2", {"198.18.1.12", "198.18.2.12"}},
    {"h3", {"198.18.1.13"}},
    {"mgmt", {}},
};

std::string name_of(const std::variant<std::string, AgentRefusal>& who) {
  if (const auto* r = std::get_if<AgentRefusal>(&who)) return "refused: " + r->why;
  return std::get<std::string>(who);
}

TEST(AgentIdentity, ANameInTheInventoryWithOneOfItsAddresses) {
  EXPECT_EQ(name_of(identify_agent(hello("h2", {"10.0.0.5", "198.18.2.12"}), inventory)), "h2");
  // An agent that lists no addresses, or a host the inventory gives none: the name decides.
  EXPECT_EQ(name_of(identify_agent(hello("h1", {}), inventory)), "h1");
  EXPECT_EQ(name_of(identify_agent(hello("mgmt", {"10.9.9.9"}), inventory)), "mgmt");
}

TEST(AgentIdentity, ANameWithAnotherHostsAddressesIsRefused) {
  EXPECT_EQ(name_of(identify_agent(hello("h1", {"198.18.1.13"}), inventory)),
            "refused: an agent says it is host 'h1' but has none of its NIC addresses "
            "(198.18.1.11); it has 198.18.1.13: start it with the inventory's name for its host "
            "(--as)");
}

TEST(AgentIdentity, AnotherNameIsMatchedByItsAddresses) {
  // pdsh and systemd start agents that know the machine's name, not the inventory's.
  EXPECT_EQ(name_of(identify_agent(hello("gpu-node-0013", {"198.18.1.13", "10.1.1.1"}), inventory)),
            "h3");
  // The host with the most of the agent's addresses.
  EXPECT_EQ(
      name_of(identify_agent(hello("x", {"198.18.1.12", "198.18.2.12", "198.18.1.11"}), inventory)),
      "h2");
}

TEST(AgentIdentity, NoMatchOrAnEvenMatchIsRefused) {
  EXPECT_EQ(name_of(identify_agent(hello("stray", {"10.0.0.1"}), inventory)),
            "refused: an agent on host 'stray' is not in the inventory: no host is named so and "
            "none has its NIC or management addresses (10.0.0.1)");
  EXPECT_EQ(name_of(identify_agent(hello("stray", {}), inventory)),
            "refused: an agent on host 'stray' is not in the inventory: no host is named so and "
            "none has its NIC or management addresses (it has none)");
  EXPECT_EQ(name_of(identify_agent(hello("x", {"198.18.1.11", "198.18.1.13"}), inventory)),
            "refused: an agent on host 'x' has NIC addresses of more than one inventory host "
            "(198.18.1.11, 198.18.1.13); start it with --as naming its host");
}

// A capture host on a mirror port has no NICs in the inventory: its management address, which
// the agent's hello lists among its local addresses, identifies it.
TEST(AgentIdentity, AHostWithoutNicsIsMatchedByItsManagementAddress) {
  std::vector<ExpectedHost> with_capture = inventory;
  with_capture.push_back({.name = "cap1", .addresses = {}, .management = "198.19.0.50"});
  with_capture.push_back({.name = "cap2", .addresses = {}, .management = "198.19.0.51"});
  EXPECT_EQ(
      name_of(identify_agent(hello("mirror-box", {"127.0.0.1", "198.19.0.50"}), with_capture)),
      "cap1");
  // A NIC address still wins over a management address.
  EXPECT_EQ(name_of(identify_agent(hello("x", {"198.19.0.51", "198.18.1.13"}), with_capture)),
            "h3");
  EXPECT_EQ(name_of(identify_agent(hello("x", {"198.19.0.50", "198.19.0.51"}), with_capture)),
            "refused: an agent on host 'x' has the management addresses of more than one "
            "inventory host (cap1, cap2); start it with --as naming its host");
}

TEST(AgentIdentity, AHostileNameIsShownHarmlessly) {
  const std::string why = name_of(identify_agent(hello("a\x1b[2J\nb", {}), inventory));
  EXPECT_EQ(why.find('\x1b'), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_NE(why.find("'a?[2J?b'"), std::string::npos) << why;
}

}  // namespace
}  // namespace rocehil::remote
