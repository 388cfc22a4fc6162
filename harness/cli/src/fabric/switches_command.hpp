#pragma once

#include <CLI/App.hpp>

namespace rocehil::cli {

// Adds `rocehil switches poll|lldp`: the switches' own view, read over SNMP.
void add_switches_command(CLI::App& app, int& exit_code);

}  // namespace rocehil::cli
