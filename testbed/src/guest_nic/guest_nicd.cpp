#include "guest_nic/nic_loop.hpp"
#include "rocehil/testbed/guest_nic.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

int run_guest_nic(const std::string& netns, const std::string& config_path,
                  const std::function<void(std::string_view)>& log) {
  enter_data_plane_namespace(netns, "guest-nic", log);
  return guest_nic::run_nic(config_path, log);
}

}  // namespace rocehil::testbed
