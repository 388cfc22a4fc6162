#include "testbed/testbed_link_command.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>

#include "rocehil/testbed/link_state.hpp"

namespace rocehil::cli {

void add_testbed_link_command(CLI::App* testbed, int& exit_code) {
  auto link = std::make_shared<std::string>();
  auto state = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = testbed->add_subcommand(
      "link", "Take a fabric link of a running testbed down, or bring it up, at both ends");
  cmd->add_option("LINK", *link, "A host link or uplink as the inventory names it (l1-s1, h1-l1)")
      ->required();
  cmd->add_option("STATE", *state, "down or up")->required()->check(CLI::IsMember({"down", "up"}));
  cmd->add_option("--dir", *dir, "The testbed's directory, as given to 'testbed up'")->required();
  cmd->footer(R"(
Example: pull the cable between leaf l1 and spine s1, then put it back:
  rocehil testbed link l1-s1 down --dir /tmp/tb
  rocehil testbed link l1-s1 up --dir /tmp/tb
Both ends are set with 'ip link set' in their namespaces and read back. The testbed routes
statically: traffic hashed onto a link that is down is lost, not rerouted. A suite's link_down
and link_up events do the same, journaled, during a case (docs/suites.md, "Events").)");
  cmd->callback([link, state, dir, &exit_code] {
    testbed::set_link_state(*dir, *link, *state == "up");
    fmt::print("link {} is {} at both ends\n", *link, *state);
    exit_code = 0;
  });
}

}  // namespace rocehil::cli
