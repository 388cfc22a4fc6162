#include "rocehil/suites/measurable.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "rocehil/suites/metrics.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::suites {

namespace {

bool is_nic_or_switch(std::string_view metric) {
  return metric.starts_with("nic_") || metric.starts_with("switch_");
}

bool needs_captures(std::string_view metric) {
  for (const std::string_view m :
       {"mirror_cnps", "ecn_marked", "mirror_packets", "mirror_acks", "mirror_naks",
        "pfc_pause_fraction", "pfc_storms", "pfc_frames", "capture_coverage", "cnp_reconciliation",
        "pfc_reconciliation", "switch_mirror_reconciliation", "ecmp_imbalance"})
    if (m == metric) return true;
  return false;
}

// What the traffic itself gives: the agents' numbers for the workload and engine.
std::vector<std::string_view> traffic_metrics(const SuiteTest& test) {
  if (test.workload == parts_workload) return {};  // each part's are its own
  // The soft provider counts these per QP; the perftest engine reports none of them.
  const std::vector<std::string_view> per_qp = {"retransmits", "timeouts", "naks", "cnps",
                                                "cnp_per_s"};
  std::vector<std::string_view> out;
  const auto add = [&](std::initializer_list<std::string_view> names) {
    out.insert(out.end(), names.begin(), names.end());
  };
  if (is_calibration(test)) {
    add({"calibration_rocehil", "calibration_perftest", "calibration_ratio", "calibration_spread",
         "errors"});
    return out;
  }
  const std::string_view workload = measured_workload(test);
  if (workload == "iperf3") {
    // TCP has no datagrams to lose; UDP no retransmissions.
    if (test.settings.iperf3.protocol == "udp")
      add({"iperf_gbps", "iperf_loss_ratio"});
    else
      add({"iperf_gbps", "iperf_retransmits"});
    return out;
  }
  const bool perftest = test.settings.engine == "perftest";
  if (workload == "bw" && perftest) {
    add({"busbw_gbps", "algbw_gbps", "errors", "perftest_bw_peak_gbps", "perftest_bw_average_gbps",
         "perftest_msg_rate_mpps"});
  } else if (workload == "lat" && perftest) {
    add({"lat_p50_us", "lat_p99_us", "lat_max_us", "lat_avg_us", "errors", "perftest_t_min_us",
         "perftest_t_max_us", "perftest_t_typical_us", "perftest_t_avg_us", "perftest_t_stdev_us",
         "perftest_t_p99_us", "perftest_t_p999_us"});
  } else if (workload == "bw") {
    add({"busbw_gbps", "algbw_gbps", "fairness_jain", "rate_deviation", "data_errors", "errors"});
    out.insert(out.end(), per_qp.begin(), per_qp.end());
  } else if (workload == "lat") {
    add({"lat_p50_us", "lat_p99_us", "lat_max_us", "lat_avg_us", "errors"});
    out.insert(out.end(), per_qp.begin(), per_qp.end());
  } else if (workload == "incast") {
    // Every sender writes into the receiver's one buffer at once: its output has no single right
    // answer, so no incast's data is checked (traffic::expected_output_crc32s).
    add({"busbw_gbps", "algbw_gbps", "time_us", "time_p99_us", "time_cv", "fairness_jain",
         "rate_deviation", "errors"});
    out.insert(out.end(), per_qp.begin(), per_qp.end());
  } else {  // a collective
    add({"busbw_gbps", "algbw_gbps", "time_us", "time_p99_us", "time_cv", "fairness_jain",
         "rate_deviation", "data_errors", "errors"});
    out.insert(out.end(), per_qp.begin(), per_qp.end());
  }
  return out;
}

std::string workload_words(const SuiteTest& test) {
  if (test.workload == "iperf3")
    return fmt::format("workload iperf3 with protocol {}", test.settings.iperf3.protocol);
  if (is_calibration(test) || test.settings.engine == "rocehil")
    return fmt::format("workload {}", test.workload);
  return fmt::format("workload {} with engine {}", test.workload, test.settings.engine);
}

// Whether a bw sender of rocehil's engine runs in the test (or one of its parts): its agent
// samples the bytes it delivered, which stalls and recoveries are read from.
bool has_timeline(const SuiteTest& test) {
  const auto sends = [](const SuiteTest& t) {
    return measured_workload(t) == "bw" && t.settings.engine != "perftest" && !is_calibration(t);
  };
  if (test.workload != parts_workload) return sends(test);
  return std::any_of(test.parts.begin(), test.parts.end(),
                     [&](const Part& p) { return sends(test_of_part(test, p)); });
}

bool from_timelines(const SuiteTest& test, std::string_view metric) {
  if (metric == "max_stall_ms") return has_timeline(test);
  if (metric == "recovery_ms") return has_timeline(test) && !test.events.empty();
  return false;
}

}  // namespace

std::vector<std::string_view> metrics_of_test(const SuiteTest& test) {
  const std::vector<std::string_view> traffic = traffic_metrics(test);
  std::vector<std::string_view> out;
  for (const MetricInfo& m : known_metrics()) {
    if (is_nic_or_switch(m.name) && m.name != "switch_mirror_reconciliation") continue;
    const bool from_traffic = std::find(traffic.begin(), traffic.end(), m.name) != traffic.end();
    const bool from_captures = needs_captures(m.name) && !test.settings.captures.empty() &&
                               (m.name != "ecmp_imbalance" || test.settings.captures.size() >= 2);
    if (from_traffic || from_captures || from_timelines(test, m.name)) out.push_back(m.name);
  }
  return out;
}

std::optional<std::string> never_measured_by_test(const SuiteTest& test, std::string_view metric) {
  if (find_metric(metric) == nullptr) return std::nullopt;  // the parser names unknown ones
  if (metric == "switch_recovery_ms" && test.events.empty())
    return std::string(
        "switch_recovery_ms is the time the switches took back to the rate before a fabric "
        "event, and the test has no `events:`");
  if (is_nic_or_switch(metric) && metric != "switch_mirror_reconciliation") return std::nullopt;
  const std::vector<std::string_view> measured = metrics_of_test(test);
  if (std::find(measured.begin(), measured.end(), metric) != measured.end()) return std::nullopt;
  std::string why;
  if (metric == "ecmp_imbalance" && test.settings.captures.size() == 1)
    why =
        "ecmp_imbalance compares two or more capture points and the test names one in "
        "`captures:`";
  else if (needs_captures(metric) && test.settings.captures.empty())
    why =
        fmt::format("{} comes from capture points and the test names none in `captures:`", metric);
  else if (metric == "recovery_ms" && has_timeline(test))
    why =
        "recovery_ms is the time back to the rate before a fabric event, and the test has no "
        "`events:`";
  else if ((metric == "max_stall_ms" || metric == "recovery_ms") && !has_timeline(test))
    why = fmt::format(
        "{} is read from bw senders' timelines (engine rocehil), and the test runs none", metric);
  else if (metric == "data_errors" && measured_workload(test) == "incast")
    why =
        "an incast's senders all write into the receiver's one buffer at once, so its output has "
        "no single right answer and no incast's data is checked (data_errors)";
  else
    why = fmt::format("{} never measures {}", workload_words(test), metric);
  return fmt::format(
      "{}; this test measures {} (and the NICs' nic_* and switches' switch_* "
      "counters where they count them)",
      why, fmt::join(measured, ", "));
}

std::optional<std::string> never_measured_in_parts(const SuiteTest& test, const MetricRef& metric) {
  if (find_metric(metric.name) == nullptr) return std::nullopt;  // the parser names unknown ones
  std::string names;
  for (const Part& p : test.parts) names += (names.empty() ? "" : ", ") + p.name;
  const auto part = std::find_if(test.parts.begin(), test.parts.end(),
                                 [&](const Part& p) { return p.name == metric.part; });
  if (metric.part.empty()) {
    // Fairness between two bw parts or more is the case's: their senders' rates compared.
    const auto bw_parts = std::count_if(test.parts.begin(), test.parts.end(), [&](const Part& p) {
      return measured_workload(test_of_part(test, p)) == "bw";
    });
    if ((metric.name == "fairness_jain" || metric.name == "rate_deviation") && bw_parts >= 2)
      return std::nullopt;
    // The traffic's own numbers are each part's; what the captures, NICs and switches count is
    // the whole case's.
    for (const Part& p : test.parts) {
      const auto of_part = traffic_metrics(test_of_part(test, p));
      if (std::find(of_part.begin(), of_part.end(), metric.name) != of_part.end())
        return fmt::format(
            "in a test with parts, {} is each part's: name the part, as in {}.{} (its parts: {})",
            metric.name, p.name, metric.name, names);
    }
    return never_measured_by_test(test, metric.name);
  }
  if (part == test.parts.end())
    return fmt::format("the test has no part '{}'; its parts: {}", metric.part, names);
  const SuiteTest as_test = test_of_part(test, *part);
  const auto measured = traffic_metrics(as_test);
  if (std::find(measured.begin(), measured.end(), metric.name) != measured.end())
    return std::nullopt;
  const bool of_case = is_nic_or_switch(metric.name) || needs_captures(metric.name);
  return fmt::format("part '{}' ({}) never measures {}; it measures {}{}", part->name,
                     workload_words(as_test), metric.name, fmt::join(measured, ", "),
                     of_case ? fmt::format(". {} is the whole case's (the captures, NICs and "
                                           "switches count it): name it without a part",
                                           metric.name)
                             : "");
}

std::optional<std::string> never_measured_on(std::string_view provider, std::string_view metric) {
  const MetricInfo* m = find_metric(metric);
  if (m == nullptr) return std::nullopt;
  const std::string_view source = provider == "soft" ? m->on_soft : m->on_verbs;
  // perftest's numbers need an RDMA device, which a host of either provider may have (a soft
  // host beside an RNIC, a stand-in perftest): whether it can run is the host's to say.
  if (!source.starts_with("not measured") || source.find("perftest") != std::string_view::npos)
    return std::nullopt;
  return fmt::format("the {} provider never measures {}: {}", provider, metric, source);
}

}  // namespace rocehil::suites
