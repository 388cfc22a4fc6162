#include "fabric/testbed_links.hpp"

#include <filesystem>

#include "rocehil/testbed/fabric_settings.hpp"
#include "rocehil/testbed/link_state.hpp"
#include "rocehil/testbed/paths.hpp"
#include "rocehil/testbed/state.hpp"

namespace rocehil::cli {

std::string testbed_switches_name(std::string_view id) {
  return "testbed-" + std::string(id);
}

std::optional<run::FabricLinkAccess> testbed_links_for(const std::string& inventory_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(inventory_file, ec).parent_path();
  const testbed::TestbedPaths paths{dir.string()};
  if (ec || !fs::exists(paths.state(), ec)) return std::nullopt;
  const std::optional<testbed::TestbedState> state = testbed::read_state(paths.state());
  if (!state) return std::nullopt;
  const std::string d = paths.dir;
  return run::FabricLinkAccess{
      .name = testbed_switches_name(state->options.id.empty() ? dir.filename().string()
                                                              : state->options.id),
      .read = [d] { return testbed::read_fabric_settings(d); },
      .write =
          [d](std::string_view setting, const std::string& value) {
            testbed::apply_fabric_settings(d, {{std::string(setting), value}});
          },
      .order =
          [d](std::vector<std::pair<std::string, std::string>> wanted) {
            return testbed::switch_settings_write_order(testbed::read_fabric_settings(d),
                                                        std::move(wanted));
          },
      .set_link = [d](std::string_view link, bool up) { testbed::set_link_state(d, link, up); }};
}

}  // namespace rocehil::cli
