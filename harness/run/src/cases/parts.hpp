#pragma once

// A case of a test with parts (suites::Part): every part's workload at once, each on its own
// thread with its own agents, all starting at one agreed time (plus each part's start_after_s).
// What each measured is named by it (roce.busbw_gbps); what the NICs, captures and switches count
// is the case's, merged by case_attempt as for one workload.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "cases/case_attempt.hpp"
#include "cases/case_traffic.hpp"

namespace rocehil::run {

// Each part as a test and case of its own, for what runs one workload. Built once per case; the
// contexts made from it point into it.
struct PartCase {
  const suites::Part* part = nullptr;
  suites::SuiteTest test;
  suites::TestCase test_case;
};
std::vector<PartCase> part_cases(const suites::SuiteTest& test, const suites::TestCase& tc);

// Every part proposes a start (now + its start delay) once its agents are connected; each is
// given the latest proposal, so none starts before the slowest is ready. A part that ends
// without proposing (it failed) is not waited for.
class StartGate {
 public:
  explicit StartGate(std::size_t parts) : waiting_(parts) {}
  std::int64_t agree(std::int64_t proposed_ns);
  void leave();  // a part that will not propose

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t waiting_;
  std::int64_t latest_ = 0;
};

// The parts' traffic, run at once with `run_one` (case_attempt's choice of workload), as one
// outcome: metrics under each part's name, the rest (NICs, hosts, events) together, raw["parts"]
// each part's window (agreed start, end) and traffic. The first part that failed fails it.
case_traffic::TrafficOutcome run_parts(
    const CaseContext& c,
    const std::function<case_traffic::TrafficOutcome(const CaseContext&)>& run_one);

// The hosts of every part and the names a threshold may use: hosts and link_gbps (the slowest
// NIC of any part); n, qps and size are each part's and not named.
CaseShape parts_shape(const CaseContext& c,
                      const std::function<CaseShape(const CaseContext&)>& one);

}  // namespace rocehil::run
