#pragma once

#include <string>
#include <vector>

#include "rocehil/preflight/switch_check.hpp"
#include "rocehil/switches/lldp.hpp"
#include "rocehil/switches/port_admin.hpp"
#include "rocehil/switches/snapshot.hpp"

namespace rocehil::cli {

// `inventory check`'s switches part: a row per switch, then every port the switches lack and
// every cable that differs from `links`.
std::string render_switch_check_text(const preflight::SwitchCheckReport& report);

// `rocehil switches poll`: a row per port of each switch (counters as they stand), and a line
// per switch that did not answer.
std::string render_snapshots_text(const std::vector<switches::SwitchSnapshot>& snapshots,
                                  bool all_ports);
nlohmann::json snapshots_json(const std::vector<switches::SwitchSnapshot>& snapshots);

// `rocehil switches lldp`: a row per neighbour.
std::string render_lldp_text(const std::vector<switches::LldpView>& views);
nlohmann::json lldp_json(const std::vector<switches::LldpView>& views);

// `rocehil switches port`: the port's admin status as read back after the SET.
std::string render_port_admin_text(const switches::PortAdminResult& result);
nlohmann::json port_admin_json(const switches::PortAdminResult& result);

}  // namespace rocehil::cli
