#include "rocehil/suites/metrics.hpp"

#include <algorithm>
#include <string>

#include "rocehil/inventory/yaml_reader.hpp"

namespace rocehil::suites {

namespace {

template <typename List>
std::string_view nearest(const List& list, std::string_view name) {
  std::string_view best;
  std::size_t best_distance = 4;  // farther than 3 edits is no suggestion
  for (const auto& m : list) {
    const std::size_t d = inventory::edit_distance(name, m.name);
    if (d < best_distance) {
      best = m.name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

const std::vector<MetricInfo>& known_metrics() {
  static const std::vector<MetricInfo> metrics = {
      {"busbw_gbps", "Gbit/s", "bus bandwidth (nccl-tests' busbw, in bits); bw: the payload rate"},
      {"algbw_gbps", "Gbit/s", "algorithm bandwidth: size / time, in bits"},
      {"time_us", "us", "a collective's mean time per iteration"},
      {"time_p99_us", "us", "a collective's 99th percentile time per iteration"},
      {"time_cv", "", "coefficient of variation of the time per iteration"},
      {"lat_p50_us", "us", "lat: median one-way latency"},
      {"lat_p99_us", "us", "lat: 99th percentile one-way latency"},
      {"lat_max_us", "us", "lat: largest one-way latency"},
      {"retransmits", "packets", "packets sent again (go-back-N), all QPs"},
      {"timeouts", "", "ACK timeouts, all QPs"},
      {"naks", "", "NAKs received, all QPs"},
      {"errors", "", "error completions and failed work requests"},
      {"data_errors", "ranks", "ranks or QPs whose data arrived wrong"},
      {"cnps", "frames", "CNPs the QPs handled (every sender's reaction point, summed)"},
      {"mirror_cnps", "frames", "CNPs seen on the mirror ports of the test's captures"},
      {"cnp_per_s", "frames/s", "CNPs per second of the test"},
      {"ecn_marked", "frames", "RoCEv2 frames with ECN CE seen on the mirror ports"},
      {"pfc_pause_fraction", "", "share of the test a priority was paused, per [priority]", true},
      {"pfc_storms", "", "pause storms (a priority paused longer than the storm threshold)"},
      {"pfc_frames", "frames", "PFC frames seen on the mirror ports"},
      {"ecmp_imbalance", "", "max / mean of the bytes on parallel uplinks (1 is even)"},
      {"capture_coverage", "", "frames captured / (captured + dropped), lowest capture point"},
  };
  return metrics;
}

const MetricInfo* find_metric(std::string_view name) {
  for (const auto& m : known_metrics())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<NameInfo>& known_names() {
  static const std::vector<NameInfo> names = {
      {"link_gbps", "the slowest link speed among the test's NICs (inventory)"},
      {"n", "ranks in the test case (NICs of the selected hosts)"},
      {"hosts", "hosts in the test case"},
      {"qps", "QPs per connection of the test case"},
      {"size", "the test case's message size in bytes"},
  };
  return names;
}

bool is_known_name(std::string_view name) {
  if (name.starts_with("baseline.")) return find_metric(name.substr(9)) != nullptr;
  return std::any_of(known_names().begin(), known_names().end(),
                     [&](const NameInfo& n) { return n.name == name; });
}

std::string_view nearest_metric(std::string_view name) {
  return nearest(known_metrics(), name);
}

std::string_view nearest_name(std::string_view name) {
  return nearest(known_names(), name);
}

}  // namespace rocehil::suites
