#pragma once

// A bw case by volume (a suite's bytes:; docs/suites.md, "Volume"): what the sender is asked to
// send per QP, and what run.json says of the volume asked against the bytes moved.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "rocehil/suites/suite.hpp"

namespace rocehil::run::case_traffic {

// Messages of `size` each QP connection sends; 0 when the test runs by duration_s.
std::uint64_t volume_messages(const suites::SuiteTest& test, std::uint64_t size);

// The volume asked of `qps` connections, and what moved: run.json's "volume". `moved` absent:
// the sender reported nothing that counts it.
struct VolumeMoved {
  std::uint64_t bytes_per_qp = 0;
  std::uint32_t qps = 0;
  std::optional<std::uint64_t> moved;  // payload bytes that completed, all QPs
  std::uint32_t qps_short = 0;         // connections that moved less than bytes_per_qp
};
nlohmann::json volume_json(const VolumeMoved& v);

// Why a run moved less than its volume ("moved 3145728 of the 4194304 bytes asked ..."), or
// nothing when it moved it all.
std::optional<std::string> volume_shortfall(const VolumeMoved& v);

}  // namespace rocehil::run::case_traffic
