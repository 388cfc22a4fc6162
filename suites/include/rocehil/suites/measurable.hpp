#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/suites/suite.hpp"
#include "rocehil/suites/threshold.hpp"

namespace rocehil::suites {

// Which metrics a test can measure at all. A threshold on a metric the test can never measure is
// refused before anything runs (suite validate, rocehil run), never left to error after the case
// has spent its time. Two halves: what the file alone decides (workload, engine, captures), and
// what the provider adds (a soft host has no RDMA device, a verbs NIC no per-QP counters).

// The metrics the test's workload, engine and captures give, in known_metrics()' order; the NICs'
// (nic_*) and the switches' (switch_*) counters are not listed: the hosts and switches decide.
std::vector<std::string_view> metrics_of_test(const SuiteTest& test);

// Why `metric` can never be measured by the test as written (its workload, engine or captures),
// with what it does measure; nothing when it can be.
std::optional<std::string> never_measured_by_test(const SuiteTest& test, std::string_view metric);

// never_measured_by_test for a test with parts: a part's metric (roce.busbw_gbps) by its part's
// workload; one without a part must be the case's (captures, NICs, switches), not a part's.
std::optional<std::string> never_measured_in_parts(const SuiteTest& test, const MetricRef& metric);

// Why the provider ("soft", "verbs") can never give `metric` (docs/metrics.md's table: "not
// measured ..."); nothing when it can. perftest's numbers are not the provider's to refuse: they
// need an RDMA device on the host, whatever its provider.
std::optional<std::string> never_measured_on(std::string_view provider, std::string_view metric);

}  // namespace rocehil::suites
