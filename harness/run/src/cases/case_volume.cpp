#include "cases/case_volume.hpp"

#include <fmt/format.h>

namespace rocehil::run::case_traffic {

std::uint64_t volume_messages(const suites::SuiteTest& test, std::uint64_t size) {
  // The loader refused a volume that is not whole messages of every size the test sweeps.
  if (test.settings.bytes == 0 || size == 0 || suites::measured_workload(test) != "bw") return 0;
  return test.settings.bytes / size;
}

nlohmann::json volume_json(const VolumeMoved& v) {
  const std::uint64_t asked = v.bytes_per_qp * v.qps;
  nlohmann::json j{{"bytes_per_qp", v.bytes_per_qp}, {"qps", v.qps}, {"bytes_asked", asked}};
  // Not measured is absent, never 0.
  if (v.moved) {
    j["bytes_moved"] = *v.moved;
    j["complete"] = *v.moved >= asked && v.qps_short == 0;
    j["qps_short"] = v.qps_short;
  }
  return j;
}

std::optional<std::string> volume_shortfall(const VolumeMoved& v) {
  const std::uint64_t asked = v.bytes_per_qp * v.qps;
  if (!v.moved)
    return fmt::format("the sender reported no bytes moved of the {} asked (bytes: {} per QP)",
                       asked, v.bytes_per_qp);
  if (*v.moved >= asked && v.qps_short == 0) return std::nullopt;
  return fmt::format("moved {} of the {} bytes asked (bytes: {} per QP; {} of {} QPs short)",
                     *v.moved, asked, v.bytes_per_qp, v.qps_short, v.qps);
}

}  // namespace rocehil::run::case_traffic
