#include "dataplane/switch_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/switch_knobs.hpp"

namespace rocehil::testbed::dataplane {

std::string to_json_text(const SwitchConfig& c) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : c.ports) ports.push_back({{"ifname", p.ifname}, {"mbps", p.mbps}});
  const nlohmann::json j = {
      {"name", c.name}, {"ecmp_seed", c.ecmp_seed}, {"counters_path", c.counters_path},
      {"cpu", c.cpu},   {"ports", ports},           {"knobs", knobs_to_json(c.knobs)}};
  return j.dump(2) + "\n";
}

SwitchConfig parse_switch_config(std::string_view text, const std::string& path) {
  SwitchConfig c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
    c.name = j.at("name").get<std::string>();
    c.ecmp_seed = j.at("ecmp_seed").get<std::uint32_t>();
    c.counters_path = j.at("counters_path").get<std::string>();
    c.cpu = j.value("cpu", -1);
    for (const auto& p : j.at("ports"))
      c.ports.push_back({p.at("ifname").get<std::string>(), p.at("mbps").get<int>()});
  } catch (const nlohmann::json::exception& e) {
    throw input_error(fmt::format(
        "{}: {}; this file is written by 'rocehil testbed up --lossless': bring the testbed up "
        "again",
        path, e.what()));
  }
  if (c.ports.empty())
    throw input_error(fmt::format("{}: ports: none; bring the testbed up again", path));
  c.knobs = knobs_from_json(j.at("knobs"), path);
  return c;
}

lossless::DscpToTc dscp_map(const SwitchKnobs& knobs) {
  lossless::DscpToTc map = lossless::sonic_dscp_to_tc();
  for (const auto& [dscp, tc] : parse_dscp_pairs(knobs.dscp_to_tc, "switch.dscp_to_tc"))
    map[static_cast<std::size_t>(dscp)] = static_cast<std::uint8_t>(tc);
  return map;
}

lossless::PortProfile port_profile(const SwitchKnobs& knobs, int port_mbps,
                                   std::uint32_t headroom_bytes) {
  lossless::PortProfile p = lossless::sonic_roce_profile(port_mbps > 0 ? port_mbps : 100'000);
  for (int q = 0; q < lossless::classes; ++q) {
    lossless::QueueProfile& queue = p.queues[q];
    queue.lossless = std::count(knobs.pfc_priorities.begin(), knobs.pfc_priorities.end(), q) != 0;
    queue.weight = queue.lossless ? 15 : 14;
    // SONiC's AZURE_LOSSLESS WRED profile sits on the lossless queues; the lossy ones tail-drop.
    queue.wred = lossless::Wred{false, 0, 0, 0};  // none
    if (queue.lossless && knobs.ecn_enable)
      queue.wred = {true, static_cast<std::uint32_t>(knobs.wred_kmin_kb) * 1000,
                    static_cast<std::uint32_t>(knobs.wred_kmax_kb) * 1000,
                    knobs.wred_pmax_percent / 100.0};
  }
  p.xoff_bytes = static_cast<std::uint32_t>(knobs.xoff_kb) * 1000;
  // XON a quarter of XOFF below it: the senders resume before the queue runs dry.
  p.xon_bytes = p.xoff_bytes - p.xoff_bytes / 4;
  p.headroom_bytes = headroom_bytes;
  return p;
}

}  // namespace rocehil::testbed::dataplane
