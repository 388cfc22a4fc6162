#pragma once

#include <string>
#include <vector>

#include "rocehil/run/calibrate.hpp"

namespace rocehil::cli {

// `rocehil calibrate` for a terminal: per workload and size, each engine's median with the spread
// of its rounds, their ratio and the verdict; then why each row that did not pass did not.
std::string render_calibration(const run::CalibrateOptions& options,
                               const std::vector<run::CalibrationRow>& rows);

}  // namespace rocehil::cli
