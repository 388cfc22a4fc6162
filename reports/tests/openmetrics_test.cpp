#include "rocehil/reports/openmetrics.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace rocehil::reports {
namespace {

// Python's prometheus_client parses a real run's export in the run_cli system test; these check
// the rules a parser is strict about.

History::RunSnapshot sample() {
  History::RunSnapshot s;
  s.row.run_id = "20261122T184501Z-smoke";
  s.row.started_at = "2026-11-22T18:45:01Z";
  s.row.suite = "smo\"ke";
  s.row.exit_code = 1;
  s.cases.push_back({"allreduce/qps=8", "allreduce", "allreduce", "fail"});
  s.cases.push_back({"incast", "incast", "incast", "pass"});
  s.samples["allreduce/qps=8"]["busbw_gbps"] = {0.3, 0.1, 0.2};
  s.samples["allreduce/qps=8"]["pfc_pause_fraction[3]"] = {0.5, 0.5, 0.5};
  s.samples["allreduce/qps=8"]["ecn_marked"] = {40, 40, 40};
  s.samples["allreduce/qps=8"]["ecn_marked[dscp=26]"] = {30, 30, 30};
  s.samples["incast"]["busbw_gbps"] = {0.7};
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(OpenMetrics, MediansOfRepeatsWithEscapedLabels) {
  const std::string text = to_openmetrics(sample());
  EXPECT_NE(text.find("rocehil_busbw_gbps{suite=\"smo\\\"ke\",case=\"allreduce/qps=8\","
                      "test=\"allreduce\"} 0.2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rocehil_pfc_pause_fraction{suite=\"smo\\\"ke\",case=\"allreduce/qps=8\","
                      "test=\"allreduce\",priority=\"3\"} 0.5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rocehil_ecn_marked{suite=\"smo\\\"ke\",case=\"allreduce/qps=8\","
                      "test=\"allreduce\",dscp=\"26\"} 30\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rocehil_run_start_time_seconds{suite=\"smo\\\"ke\"} 1795373101\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rocehil_run_cases{suite=\"smo\\\"ke\",outcome=\"fail\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("rocehil_case_repeats{suite=\"smo\\\"ke\",case=\"allreduce/qps=8\","
                      "test=\"allreduce\"} 3\n"),
            std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST(OpenMetrics, EachFamilyIsTypedOnceAndItsSamplesAreTogether) {
  const auto lines = lines_of(to_openmetrics(sample()));
  const std::regex sample_line(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)\{[^}]*\} [-0-9.e+]+$)");
  std::set<std::string> finished;
  std::string current;
  for (const auto& line : lines) {
    if (line == "# EOF") break;
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(finished.contains(name)) << name << " typed twice";
      if (!current.empty()) finished.insert(current);
      current = name;
      EXPECT_EQ(line, "# TYPE " + name + " gauge");
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, sample_line)) << line;
    EXPECT_EQ(m[1], current) << "a sample away from its family: " << line;
  }
  EXPECT_EQ(lines.back(), "# EOF");
}

}  // namespace
}  // namespace rocehil::reports
