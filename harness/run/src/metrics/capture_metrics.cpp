#include "rocehil/run/capture_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "rocehil/common/error.hpp"

namespace rocehil::run {

namespace {

struct PointNumbers {
  double roce_bytes = 0, cnps = 0, ecn_marked = 0, pfc_frames = 0, storms = 0;
  double pause_fraction[8] = {};
};

PointNumbers read_point(const agent::CaptureSummaryEvent& s) {
  try {
    const auto j = nlohmann::json::parse(s.analysis_json);
    if (j.at("schema_version").get<int>() != 1) throw std::runtime_error("schema_version not 1");
    PointNumbers p;
    p.roce_bytes = j.at("roce").at("bytes").get<double>();
    p.ecn_marked = j.at("roce").at("ecn_ce").get<double>();
    p.cnps = j.at("cnp").at("count").get<double>();
    const auto& pfc = j.at("pfc");
    p.pfc_frames = pfc.at("frames").get<double>();
    // The storm list holds every priority's and 802.3x PAUSE's (as priority 8).
    p.storms = static_cast<double>(pfc.at("storms").size());
    for (const auto& prio : pfc.at("priorities")) {
      const int i = prio.at("priority").get<int>();
      if (i >= 0 && i < 8) p.pause_fraction[i] = prio.at("pause_fraction").get<double>();
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
    for (const char* key : {"mirror_cnps", "ecn_marked", "pfc_frames", "pfc_storms",
                            "capture_coverage", "pfc_pause_fraction", "ecmp_imbalance"})
      m.absent(key,
               "no capture ran beside this test (name the inventory's capture points in the "
               "test's `captures:`)");
    return m;
  }
  double cnps = 0, ecn = 0, frames = 0, storms = 0, coverage = 1, bytes_sum = 0, bytes_max = 0;
  double pause[8] = {};
  std::string data_filtered;  // a point whose filter kept no data frames: no bytes, no CE marks
  for (const auto& s : summaries) {
    const PointNumbers p = read_point(s);
    cnps += p.cnps;
    ecn += p.ecn_marked;
    frames += p.pfc_frames;
    storms += p.storms;
    coverage = std::min(coverage, s.coverage);
    bytes_sum += p.roce_bytes;
    bytes_max = std::max(bytes_max, p.roce_bytes);
    for (int i = 0; i < 8; ++i) pause[i] = std::max(pause[i], p.pause_fraction[i]);
    if (s.filter == "cnp-pfc" && data_filtered.empty()) data_filtered = s.iface;
  }
  auto& v = m.values;
  v["mirror_cnps"] = cnps;
  v["pfc_frames"] = frames;
  v["pfc_storms"] = storms;
  v["capture_coverage"] = coverage;
  for (int i = 0; i < 8; ++i) v[fmt::format("pfc_pause_fraction[{}]", i)] = pause[i];
  if (!data_filtered.empty()) {
    const std::string why = fmt::format(
        "the capture on {} used filter 'cnp-pfc', which keeps no data frames (set the suite's "
        "capture.filter to roce or all)",
        data_filtered);
    m.absent("ecn_marked", why);
    m.absent("ecmp_imbalance", why);
    return m;
  }
  v["ecn_marked"] = ecn;
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
