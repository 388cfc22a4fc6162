#pragma once

#include <string>
#include <vector>

#include "rocehil/inventory/inventory.hpp"
#include "rocehil/remote/agent_link.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::run {

// A suite against the inventory it will run on, before anything runs: every test's host
// selection matches hosts with enough NICs, every capture point it names exists on a host the
// inventory can reach, every injection names a link end rocehil can send from. Returns every
// problem as "suite.yaml:LINE:COL: test 'x': ...", in file order; empty when it can run.
std::vector<std::string> check_suite_against_inventory(const suites::Suite& suite,
                                                       const inventory::Inventory& inventory);

// A suite file's own problems and, when an inventory is given, those of what could be read of
// it against the inventory, as diagnostics in file order (line, then column): every problem
// at once. Empty when the suite can run.
std::vector<inventory::Diagnostic> suite_problems(const suites::SuiteLoadResult& loaded,
                                                  const inventory::Inventory* inventory);

// The command that sends a test's pause frames: `rocehil inject pfc|pause --iface IF ...` run
// over ssh on a host, or inside a switch's network namespace on this machine (a testbed).
// `self` is this binary (what runs in a namespace). Throws rocehil::Error (bad input) naming
// the suite's line when the link or its end is not in the inventory.
struct InjectionCommand {
  remote::AgentCommand command;
  std::string from;   // the host or switch that sends
  std::string iface;  // its interface on the link
};
InjectionCommand injection_command(const suites::Injection& injection,
                                   const inventory::Inventory& inventory,
                                   const std::string& suite_file, const std::string& self,
                                   const remote::SshMultiplex* multiplex);

// The hosts a test case involves with its traffic (NIC-carrying hosts of its selection).
// Throws like inventory::select_hosts.
std::vector<const inventory::Host*> traffic_hosts(const inventory::Inventory& inventory,
                                                  const suites::SuiteTest& test);

}  // namespace rocehil::run
