#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rocehil/capture/analysis.hpp"

namespace rocehil::cli {

// Where an analysis came from, for the report's heading and warnings.
struct CaptureInfo {
  std::string path;
  std::string format;                 // "pcap-us", "pcap-ns", "pcapng"
  std::vector<std::string> problems;  // why reading stopped early, if it did
  // Where the pause times' link speed came from ("the file's if_speed (interface 0 'm1')",
  // "--link-gbps"); empty: not said (a live capture's own interface).
  std::string link_speed_source;
};

// The readable report of `rocehil analyze`: totals, RoCE opcodes, CNPs by QP, PFC per priority
// (pause requested, time paused, longest pause, storms), PAUSE, pauses sent by spines when the
// analysis knows which way the link runs, each pause storm, the top `top` flows by bytes and the
// busiest timeline bins.
std::string render_analysis_text(const capture::Analysis& analysis, const CaptureInfo& info,
                                 std::size_t top);

}  // namespace rocehil::cli
