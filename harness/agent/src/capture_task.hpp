#pragma once

// A capture task of `rocehil agent`: one live capture at a time, in a thread of its own beside
// any traffic, reported as the capture_summary event.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "rocehil/agent/protocol.hpp"
#include "rocehil/capture/capture_run.hpp"
#include "rocehil/capture/live_source.hpp"

namespace rocehil::agent {

class AgentCapture {
 public:
  // `wake_fd` (an eventfd) is signalled when a capture ends by itself, so the agent's poll loop
  // wakes and emits the summary.
  explicit AgentCapture(int wake_fd);
  ~AgentCapture();  // stops a running capture (files flushed), joins its thread
  AgentCapture(const AgentCapture&) = delete;
  AgentCapture& operator=(const AgentCapture&) = delete;

  // Opens the source and starts capturing. Throws rocehil::Error (no such interface, not root,
  // the file cannot be created, a capture already running).
  CaptureStartedReply start(const CaptureStartRequest& request);
  // A capture is open (running, or ended by itself with its summary not yet taken).
  bool active() const noexcept { return thread_.joinable(); }
  // Ends the capture and returns its summary; blocks until the files are flushed.
  CaptureSummaryEvent stop();
  // The summary of a capture that ended by itself (its seconds were over), once.
  std::optional<CaptureSummaryEvent> take_finished();

 private:
  CaptureSummaryEvent join(bool stopped);

  int wake_fd_;
  CaptureStartRequest request_;
  std::unique_ptr<capture::LiveSource> source_;
  std::unique_ptr<capture::CaptureRun> run_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  std::optional<capture::CaptureSummary> summary_;
  std::string failure_;  // what ended the capture thread, if it threw
};

// The summary event for a finished capture: counters, files, and the analysis as JSON text with
// at most `max_flows` flows; an analysis too large for one protocol line loses its timeline
// first, then its flows beyond 16 and storms beyond 256 (the pcapng on the host keeps everything).
CaptureSummaryEvent capture_summary_event(const capture::CaptureSummary& summary,
                                          const CaptureStartRequest& request, bool stopped);

}  // namespace rocehil::agent
