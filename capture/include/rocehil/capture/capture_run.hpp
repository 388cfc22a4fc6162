#pragma once

// One live capture from start to summary: frames from a LiveSource go to the pcapng file(s)
// first and then to the analyzer, until the duration is over, stop() is called or the source
// ends. Used by `rocehil capture` and by capture tasks in the agent, so both report alike.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/capture_point.hpp"
#include "rocehil/capture/live_source.hpp"

namespace rocehil::capture {

struct CaptureRunOptions {
  std::string write_path;        // pcapng to write; empty: analyse only
  std::uint32_t ring_files = 0;  // keep the newest N files of ring_bytes each (0: one file)
  std::uint64_t ring_bytes = 0;
  std::uint32_t snaplen = 128;  // as the source was opened with; recorded in the file
  double duration_s = 0;        // 0: until stop() or the source ends
  AnalyzerOptions analyzer;
  // The file's if_speed when not 0: the speed the analysis was given for the link (a run's
  // capture point) rather than the interface's own (a veth says 10 Gb/s), so that `rocehil
  // analyze` on a kept file times pauses as the run did.
  std::uint64_t file_speed_bps = 0;
};

struct CaptureProgress {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;  // wire bytes
  double elapsed_s = 0;
};

struct CaptureSummary {
  InterfaceInfo iface;
  CaptureCounters counters;
  std::uint64_t start_ns = 0;  // wall clock when capturing began and ended
  std::uint64_t end_ns = 0;
  std::vector<std::string> files;   // pcapng files on disk, oldest first
  std::uint64_t files_deleted = 0;  // older ring files removed
  std::string write_error;          // set when writing the file failed (the analysis still ran)
  // With several workers, each one's counters (`counters` is their sum); one entry otherwise.
  std::vector<CaptureCounters> workers;
  Analysis analysis;
};

class CaptureRun {
 public:
  CaptureRun(LiveSource& source, const CaptureRunOptions& options);
  // One worker thread per source, each writing its own file (write_path with "-w1", "-w2", ...
  // before the extension) and analysing its share; the analyses are joined (Analyzer::combine)
  // and the timeline counts from the capture's start. The sources come from open_live_sources.
  CaptureRun(std::vector<LiveSource*> sources, const CaptureRunOptions& options);
  ~CaptureRun();
  CaptureRun(const CaptureRun&) = delete;
  CaptureRun& operator=(const CaptureRun&) = delete;

  // Captures until the duration is over, stop() is called or the source ends. `progress` is
  // called about every 200 ms from a watcher thread. Throws rocehil::Error only when the file
  // cannot be created at the start; a later write failure ends the file, not the capture, and is
  // reported in the summary. Should a worker's analysis fail (std::bad_alloc), every worker is
  // stopped, the files are closed whole, and that exception is thrown from here.
  CaptureSummary run(const std::function<void(const CaptureProgress&)>& progress = {});
  // Ends a run in progress soon, from any thread (a signal handler should set a flag that the
  // caller's progress callback turns into stop()).
  void stop() noexcept;

 private:
  std::vector<LiveSource*> sources_;
  CaptureRunOptions options_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace rocehil::capture
