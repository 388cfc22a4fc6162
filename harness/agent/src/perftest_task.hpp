#pragma once

// A perftest task of `rocehil agent`: one perftest process at a time (server or client side),
// run in a thread of its own beside the session; it reports perftest_listening once a server
// listens and perftest_results when the process has exited.

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {

class AgentPerftest {
 public:
  // `wake_fd` (an eventfd) is signalled when there is something to report.
  explicit AgentPerftest(int wake_fd);
  ~AgentPerftest();  // a running perftest is killed and its thread joined
  AgentPerftest(const AgentPerftest&) = delete;
  AgentPerftest& operator=(const AgentPerftest&) = delete;

  // Starts the run. Throws rocehil::Error (bad input) while another run is in progress.
  void start(const PerftestRequest& request);
  // Ends a running perftest (SIGTERM, then SIGKILL); its results still come, marked stopped.
  void stop();
  bool active() const noexcept { return thread_.joinable(); }

  // What is due, each once: the port a server listens on, then the results (the thread joined).
  std::optional<PerftestListeningReply> take_listening();
  std::optional<PerftestResultsEvent> take_results();

 private:
  void run(PerftestRequest request);
  void wake();

  int wake_fd_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::optional<PerftestListeningReply> listening_;
  std::optional<PerftestResultsEvent> results_;
};

// "Version: 6.06" -> "6.06", from what `<tool> --version` printed; empty when it says nothing.
std::string perftest_version_in(std::string_view output);

// The results a finished process gives: the report read from its JSON file (when one was
// written) or its stdout table, and perftest's own error lines when it failed or printed no
// numbers. `json_text` is empty when the run wrote no file.
void read_perftest_output(PerftestResultsEvent& results, std::string_view out, std::string_view err,
                          std::string_view json_text);

}  // namespace rocehil::agent
