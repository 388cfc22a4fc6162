#include "rocehil/testbed/switchd.hpp"

#include "dataplane/switch_loop.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

int run_switchd(const std::string& netns, const std::string& config_path,
                const std::function<void(std::string_view)>& log) {
  // Ahead of the hosts' senders: each millisecond the switch waits for a CPU is a millisecond of
  // line rate that arrives before its XOFF goes out.
  enter_data_plane_namespace(netns, "switchd", log);
  return dataplane::run_switch(config_path, log);
}

}  // namespace rocehil::testbed
