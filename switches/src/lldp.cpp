#include "rocehil/switches/lldp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace rocehil::switches {

namespace {

// LLDP port ID subtypes that carry a name (IEEE 802.1AB 9.5.3.2).
constexpr int port_id_if_alias = 1;
constexpr int port_id_mac = 3;
constexpr int port_id_if_name = 5;
constexpr int port_id_local = 7;

bool printable(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
}

std::string hex_colons(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ':';
    out += fmt::format("{:02x}", c);
  }
  return out;
}

}  // namespace

bool LldpNeighbor::remote_port_is(const std::string& port) const {
  const bool id_is_name = remote_port_id_subtype == port_id_if_alias ||
                          remote_port_id_subtype == port_id_if_name ||
                          remote_port_id_subtype == port_id_local;
  return (id_is_name && remote_port_id == port) || remote_port_descr == port;
}

std::string LldpNeighbor::remote() const {
  const bool id_is_name = remote_port_id_subtype == port_id_if_alias ||
                          remote_port_id_subtype == port_id_if_name ||
                          remote_port_id_subtype == port_id_local;
  const std::string& port =
      id_is_name || remote_port_descr.empty() ? remote_port_id : remote_port_descr;
  return fmt::format("{}:{}", remote_system.empty() ? "?" : remote_system, port);
}

const std::vector<Oid>& lldp_columns() {
  static const std::vector<Oid> columns = {
      mib::if_name,
      mib::if_descr,
      mib::lldp_loc_port_id,
      mib::lldp_loc_port_desc,
      mib::lldp_rem_port_id_subtype,
      mib::lldp_rem_port_id,
      mib::lldp_rem_port_desc,
      mib::lldp_rem_sys_name,
  };
  return columns;
}

LldpView build_lldp_view(const std::string& switch_name, const std::vector<Varbind>& rows) {
  std::map<std::uint32_t, std::string> if_names, if_descrs, loc_ids, loc_descs;
  // lldpRemTable rows by (timeMark, localPortNum, index).
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, LldpNeighbor> remote;
  for (const auto& row : rows) {
    const auto text_into = [&](const Oid& column, std::map<std::uint32_t, std::string>& into) {
      if (!starts_with(row.oid, column)) return false;
      const Oid index = index_after(row.oid, column);
      if (index.size() == 1 && row.value.type == Value::Type::octets)
        into[index[0]] = row.value.text;
      return true;
    };
    if (text_into(mib::if_name, if_names) || text_into(mib::if_descr, if_descrs) ||
        text_into(mib::lldp_loc_port_id, loc_ids) || text_into(mib::lldp_loc_port_desc, loc_descs))
      continue;
    for (const Oid* column : {&mib::lldp_rem_port_id_subtype, &mib::lldp_rem_port_id,
                              &mib::lldp_rem_port_desc, &mib::lldp_rem_sys_name}) {
      if (!starts_with(row.oid, *column)) continue;
      const Oid index = index_after(row.oid, *column);
      if (index.size() != 3) break;
      LldpNeighbor& n = remote[{index[0], index[1], index[2]}];
      n.local_port_num = index[1];
      if (column == &mib::lldp_rem_port_id_subtype) {
        if (row.value.type == Value::Type::integer)
          n.remote_port_id_subtype = static_cast<int>(row.value.number);
      } else if (row.value.type == Value::Type::octets) {
        if (column == &mib::lldp_rem_port_id)
          n.remote_port_id = row.value.text;
        else if (column == &mib::lldp_rem_port_desc)
          n.remote_port_descr = row.value.text;
        else
          n.remote_system = row.value.text;
      }
      break;
    }
  }
  LldpView view;
  view.switch_name = switch_name;
  for (auto& entry : remote) {
    LldpNeighbor& n = entry.second;  // a name, not a binding: the lambdas below capture it
    if (n.remote_port_id_subtype == port_id_mac || !printable(n.remote_port_id))
      n.remote_port_id = hex_colons(n.remote_port_id);
    const auto name = [&](const std::map<std::uint32_t, std::string>& m) -> std::string {
      const auto it = m.find(n.local_port_num);
      return it != m.end() && printable(it->second) ? it->second : std::string();
    };
    // lldpLocPortNum is an ifIndex on Linux's lldpd and SONiC but a port number elsewhere, so
    // the local port ID or description wins when it is a port name the agent's IF-MIB knows.
    const auto known = [&](const std::string& candidate) {
      if (candidate.empty()) return false;
      for (const auto* m : {&if_names, &if_descrs})
        for (const auto& [i, v] : *m)
          if (v == candidate) return true;
      return false;
    };
    for (const std::string& candidate :
         {name(loc_ids), name(loc_descs), name(if_names), name(if_descrs)})
      if (known(candidate)) {
        n.local_port = candidate;
        break;
      }
    for (const std::string& candidate : {name(loc_ids), name(loc_descs), name(if_names)})
      if (n.local_port.empty()) n.local_port = candidate;
    if (n.local_port.empty()) n.local_port = fmt::format("port {}", n.local_port_num);
    view.neighbors.push_back(std::move(n));
  }
  return view;
}

}  // namespace rocehil::switches
