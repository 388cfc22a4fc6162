#include "rocehil/run/capture_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

// What a mirror port saw of one DSCP (the analysis' by_dscp).
struct ClassNumbers {
  double packets = 0, ecn_ce = 0, cnps = 0, acks = 0, naks = 0;
};

struct PointNumbers {
  double roce_bytes = 0, roce_packets = 0, cnps = 0, ecn_marked = 0, acks = 0, naks = 0;
  double pfc_frames = 0, storms = 0;
  double pause_fraction[8] = {};
  double pfc_frames_by_priority[8] = {};
  std::map<int, ClassNumbers> by_dscp;
};

PointNumbers read_point(const agent::CaptureSummaryEvent& s) {
  try {
    const auto j = nlohmann::json::parse(s.analysis_json);
    if (j.at("schema_version").get<int>() != 1) throw std::runtime_error("schema_version not 1");
    PointNumbers p;
    const auto& roce = j.at("roce");
    p.roce_bytes = roce.at("bytes").get<double>();
    p.roce_packets = roce.at("packets").get<double>();
    p.ecn_marked = roce.at("ecn_ce").get<double>();
    p.acks = roce.at("acks").get<double>();
    p.naks = roce.at("naks").get<double>();
    p.cnps = j.at("cnp").at("count").get<double>();
    for (const auto& [dscp, counts] : j.at("by_dscp").items()) {
      const int d = std::stoi(dscp);
      if (d < 0 || d > 63) throw std::runtime_error("by_dscp key " + dscp + " is not a DSCP");
      p.by_dscp[d] = {counts.at("packets").get<double>(), counts.at("ecn_ce").get<double>(),
                      counts.at("cnps").get<double>(), counts.at("acks").get<double>(),
                      counts.at("naks").get<double>()};
    }
    const auto& pfc = j.at("pfc");
    p.pfc_frames = pfc.at("frames").get<double>();
    // The storm list holds every priority's and 802.3x PAUSE's (as priority 8).
    p.storms = static_cast<double>(pfc.at("storms").size());
    for (const auto& prio : pfc.at("priorities")) {
      const int i = prio.at("priority").get<int>();
      if (i < 0 || i >= 8) continue;
      p.pause_fraction[i] = prio.at("pause_fraction").get<double>();
      p.pfc_frames_by_priority[i] = prio.at("frames").get<double>();
    }
    return p;
  } catch (const std::exception& e) {
    throw Error(ExitCode::infrastructure,
                fmt::format("capture on {}: its analysis cannot be read ({})", s.iface, e.what()));
  }
}

}  // namespace

suites::Measured capture_metrics(const std::vector<agent::CaptureSummaryEvent>& summaries) {
  suites::Measured m;
  if (summaries.empty()) {
    for (const char* key :
         {"mirror_cnps", "ecn_marked", "mirror_packets", "mirror_acks", "mirror_naks", "pfc_frames",
          "pfc_storms", "capture_coverage", "pfc_pause_fraction", "ecmp_imbalance"})
      m.absent(key,
               "no capture ran beside this test (name the inventory's capture points in the "
               "test's `captures:`)");
    return m;
  }
  double cnps = 0, ecn = 0, packets = 0, acks = 0, naks = 0, frames = 0, storms = 0;
  double coverage = 1, bytes_sum = 0, bytes_max = 0;
  double pause[8] = {}, frames_by_priority[8] = {};
  std::map<int, ClassNumbers> classes;
  std::string data_filtered;  // a point whose filter kept no data frames: no bytes, no CE marks
  for (const auto& s : summaries) {
    const PointNumbers p = read_point(s);
    cnps += p.cnps;
    ecn += p.ecn_marked;
    packets += p.roce_packets;
    acks += p.acks;
    naks += p.naks;
    for (const auto& [dscp, c] : p.by_dscp) {
      ClassNumbers& sum = classes[dscp];
      sum.packets += c.packets;
      sum.ecn_ce += c.ecn_ce;
      sum.cnps += c.cnps;
      sum.acks += c.acks;
      sum.naks += c.naks;
    }
    frames += p.pfc_frames;
    for (int i = 0; i < 8; ++i) frames_by_priority[i] += p.pfc_frames_by_priority[i];
    storms += p.storms;
    coverage = std::min(coverage, s.coverage);
    bytes_sum += p.roce_bytes;
    bytes_max = std::max(bytes_max, p.roce_bytes);
    for (int i = 0; i < 8; ++i) pause[i] = std::max(pause[i], p.pause_fraction[i]);
    if (s.filter == "cnp-pfc" && data_filtered.empty()) data_filtered = s.iface;
  }
  auto& v = m.values;
  v["mirror_cnps"] = cnps;
  // By class: only the DSCPs the captures saw; a threshold on another reads 0 (threshold.hpp).
  for (const auto& [dscp, c] : classes)
    if (c.cnps > 0) v[fmt::format("mirror_cnps[dscp={}]", dscp)] = c.cnps;
  v["pfc_frames"] = frames;
  for (int i = 0; i < 8; ++i) v[fmt::format("pfc_frames[{}]", i)] = frames_by_priority[i];
  v["pfc_storms"] = storms;
  v["capture_coverage"] = coverage;
  for (int i = 0; i < 8; ++i) v[fmt::format("pfc_pause_fraction[{}]", i)] = pause[i];
  if (!data_filtered.empty()) {
    const std::string why = fmt::format(
        "the capture on {} used filter 'cnp-pfc', which keeps no data frames (set the suite's "
        "capture.filter to roce or all)",
        data_filtered);
    for (const char* key :
         {"ecn_marked", "mirror_packets", "mirror_acks", "mirror_naks", "ecmp_imbalance"})
      m.absent(key, why);
    return m;
  }
  v["ecn_marked"] = ecn;
  v["mirror_packets"] = packets;
  v["mirror_acks"] = acks;
  v["mirror_naks"] = naks;
  for (const auto& [dscp, c] : classes) {
    v[fmt::format("mirror_packets[dscp={}]", dscp)] = c.packets;
    if (c.ecn_ce > 0) v[fmt::format("ecn_marked[dscp={}]", dscp)] = c.ecn_ce;
    if (c.acks > 0) v[fmt::format("mirror_acks[dscp={}]", dscp)] = c.acks;
    if (c.naks > 0) v[fmt::format("mirror_naks[dscp={}]", dscp)] = c.naks;
  }
  if (summaries.size() < 2)
    m.absent("ecmp_imbalance",
             "it compares the RoCE bytes of two or more capture points (one per spine); this "
             "test has one");
  else if (bytes_sum == 0)
    m.absent("ecmp_imbalance", "the capture points saw no RoCE bytes");
  else
    v["ecmp_imbalance"] = bytes_max / (bytes_sum / static_cast<double>(summaries.size()));
  return m;
}

}  // namespace rocehil::run
