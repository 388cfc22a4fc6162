#include "rocehil/capture/analysis_json.hpp"

#include <string>

namespace rocehil::capture {

using nlohmann::json;

namespace {

json roce_json(const Analysis::Roce& r) {
  json by_opcode = json::object();
  for (std::size_t op = 0; op < r.by_opcode.size(); ++op) {
    if (r.by_opcode[op] == 0) continue;
    const char* name = opcode_name(static_cast<std::uint8_t>(op));
    by_opcode[name ? std::string(name) : "0x" + std::to_string(op)] = r.by_opcode[op];
  }
  return {{"packets", r.packets},   {"malformed", r.malformed}, {"ecn_ce", r.ecn_ce},
          {"bytes", r.bytes},       {"acks", r.acks},           {"naks", r.naks},
          {"rnr_naks", r.rnr_naks}, {"by_opcode", by_opcode}};
}

json pfc_json(const Analysis::Pfc& pfc) {
  json priorities = json::array();
  for (std::size_t p = 0; p < pfc.priorities.size(); ++p) {
    const PfcPriority& x = pfc.priorities[p];
    priorities.push_back({{"priority", p},
                          {"frames", x.frames},
                          {"xoff", x.xoff},
                          {"xon", x.xon},
                          {"quanta", x.quanta},
                          {"pause_ns", x.pause_ns}});
  }
  return {{"frames", pfc.frames}, {"malformed", pfc.malformed}, {"priorities", priorities}};
}

json flow_json(const Flow& f) {
  const FlowStats& s = f.stats;
  return {{"src", f.key.src.to_string()},
          {"dst", f.key.dst.to_string()},
          {"dest_qp", f.key.dest_qp},
          {"packets", s.packets},
          {"bytes", s.bytes},
          {"ecn_ce", s.ecn_ce},
          {"psn_gaps", s.psn_gaps},
          {"retransmits", s.retransmits},
          {"naks", s.naks},
          {"first_ns", s.first_ns},
          {"last_ns", s.last_ns}};
}

json timeline_json(const Analysis::Timeline& t) {
  json bins = json::array();
  for (std::size_t i = 0; i < t.bins.size(); ++i) {
    const TimelineBin& b = t.bins[i];
    bins.push_back({{"t_ms", static_cast<std::uint64_t>(i) * t.bin_ms},
                    {"roce_bytes", b.roce_bytes},
                    {"cnp", b.cnp},
                    {"pfc_xoff", b.pfc_xoff},
                    {"ecn_ce", b.ecn_ce}});
  }
  return {{"bin_ms", t.bin_ms},
          {"start_ns", t.start_ns},
          {"frames_outside", t.frames_outside},
          {"bins", bins}};
}

}  // namespace

json to_json(const Analysis& a, std::size_t max_flows) {
  json by_qp = json::object();
  for (const auto& [qp, n] : a.cnp.by_dest_qp) by_qp[std::to_string(qp)] = n;

  json flows = json::array();
  for (std::size_t i = 0; i < a.flows.size() && i < max_flows; ++i)
    flows.push_back(flow_json(a.flows[i]));

  return {{"schema_version", analysis_schema_version},
          {"frames", a.frames},
          {"bytes", a.bytes},
          {"non_ethernet", a.non_ethernet},
          {"vlan_tagged", a.vlan_tagged},
          {"ipv4", a.ipv4},
          {"ipv6", a.ipv6},
          {"first_ns", a.first_ns},
          {"last_ns", a.last_ns},
          {"link_gbps", a.options.link_gbps},
          {"roce", roce_json(a.roce)},
          {"cnp", {{"count", a.cnp.count}, {"by_dest_qp", by_qp}}},
          {"pfc", pfc_json(a.pfc)},
          {"pause_8023x",
           {{"frames", a.pause_8023x.frames},
            {"xoff", a.pause_8023x.xoff},
            {"quanta", a.pause_8023x.quanta},
            {"pause_ns", a.pause_8023x.pause_ns}}},
          {"flow_count", a.flows.size()},
          {"flows", flows},
          {"timeline", timeline_json(a.timeline)}};
}

}  // namespace rocehil::capture
