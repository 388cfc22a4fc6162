#pragma once

// The forwarding process of a --lossless testbed's switch (`rocehil testbed switchd`, started
// by `up` in each leaf and spine): the model of a lossless RoCE switch port on the switch's veths
// (testbed/src/dataplane/switch_loop.hpp).

#include <functional>
#include <string>
#include <string_view>

namespace rocehil::testbed {

// Enters network namespace `netns` (this thread's, and so the process's when called before any
// thread starts), then forwards by `config_path` until SIGTERM or SIGINT; SIGHUP reads the knobs
// again. `log` gets a line for each thing worth a line (start, a storm, a reload). Returns 0 on a
// clean stop; throws rocehil::Error when it cannot start.
int run_switchd(const std::string& netns, const std::string& config_path,
                const std::function<void(std::string_view)>& log);

}  // namespace rocehil::testbed
