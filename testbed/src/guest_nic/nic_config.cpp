#include "guest_nic/nic_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"

namespace rocehil::testbed::guest_nic {

std::string to_json_text(const NicConfig& c) {
  const nlohmann::json j = {{"name", c.name},
                            {"port", c.port},
                            {"socket_path", c.socket_path},
                            {"counters_path", c.counters_path},
                            {"mbps", c.mbps},
                            {"pfc_priorities", c.pfc_priorities},
                            {"transmit_buffer_bytes", c.transmit_buffer_bytes},
                            {"receive_xoff_bytes", c.receive_xoff_bytes},
                            {"receive_xon_bytes", c.receive_xon_bytes},
                            {"receive_buffer_bytes", c.receive_buffer_bytes}};
  return j.dump(2) + "\n";
}

NicConfig parse_nic_config(std::string_view text, const std::string& path) {
  NicConfig c;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    c.name = j.at("name").get<std::string>();
    c.port = j.at("port").get<std::string>();
    c.socket_path = j.at("socket_path").get<std::string>();
    c.counters_path = j.at("counters_path").get<std::string>();
    c.mbps = j.at("mbps").get<int>();
    c.pfc_priorities = j.at("pfc_priorities").get<std::vector<int>>();
    c.transmit_buffer_bytes = j.at("transmit_buffer_bytes").get<std::uint32_t>();
    c.receive_xoff_bytes = j.at("receive_xoff_bytes").get<std::uint32_t>();
    c.receive_xon_bytes = j.at("receive_xon_bytes").get<std::uint32_t>();
    c.receive_buffer_bytes = j.at("receive_buffer_bytes").get<std::uint32_t>();
  } catch (const nlohmann::json::exception& e) {
    throw input_error(fmt::format(
        "{}: {}; this file is written by 'rocehil testbed up --vm --lossless': bring the testbed "
        "up again",
        path, e.what()));
  }
  const auto refuse = [&path](std::string_view field, std::string_view why) {
    throw input_error(fmt::format("{}: {}: {}; bring the testbed up again", path, field, why));
  };
  if (c.port.empty()) refuse("port", "empty");
  if (c.socket_path.empty()) refuse("socket_path", "empty");
  if (c.mbps < 0) refuse("mbps", "below 0");
  for (const int p : c.pfc_priorities)
    if (p < 0 || p > 7) refuse("pfc_priorities", fmt::format("{} is not a priority 0-7", p));
  if (c.transmit_buffer_bytes == 0) refuse("transmit_buffer_bytes", "0");
  if (c.receive_xon_bytes >= c.receive_xoff_bytes || c.receive_xoff_bytes >= c.receive_buffer_bytes)
    refuse("receive_xoff_bytes", "XON < XOFF < the buffer's size is needed");
  return c;
}

}  // namespace rocehil::testbed::guest_nic
