#pragma once

// How a live capture is reported: the `capture` member of `rocehil capture --json` (and of an
// agent's capture summary), and the lines a person reads above the analysis tables.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "rocehil/capture/capture_run.hpp"

namespace rocehil::cli {

// Where and how the capture ran, as given on the command line.
struct CaptureSetup {
  std::string backend;  // "pcap" or "dpdk"
  std::string filter;   // "all", "roce", "cnp-pfc"
  std::uint32_t snaplen = 0;
};

// {"backend", "iface", "description", "filter", "bpf", "snaplen", "speed_bps", "start_ns",
//  "end_ns", "duration_s", "frames", "dropped_buffer", "dropped_interface", "dropped",
//  "coverage", "moved", "workers", "files", "files_deleted", "write_error"}. Coverage is always
// there, even at 1. "moved": frames a full worker's queue passed to another (their flows were
// split over workers); "workers": each worker's frames, drops, coverage and moved.
nlohmann::json capture_json(const capture::CaptureSummary& summary, const CaptureSetup& setup);

// The capture's own lines (what, where, how long, loss, files) then the analysis tables.
std::string render_capture_text(const capture::CaptureSummary& summary, const CaptureSetup& setup,
                                std::size_t top);

}  // namespace rocehil::cli
