#pragma once

// An iperf3 task of `rocehil agent` (workload iperf3: background traffic that is not RDMA): one
// iperf3 process at a time, server or client side, run in a thread of its own beside the
// session's RDMA traffic; it reports iperf3_listening once a server listens and iperf3_results
// when the process has exited.

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {

class AgentIperf3 {
 public:
  // `wake_fd` (an eventfd) is signalled when there is something to report.
  explicit AgentIperf3(int wake_fd);
  ~AgentIperf3();  // a running iperf3 is killed and its thread joined
  AgentIperf3(const AgentIperf3&) = delete;
  AgentIperf3& operator=(const AgentIperf3&) = delete;

  // Starts the run. Throws rocehil::Error (bad input) while another run is in progress.
  void start(const Iperf3Request& request);
  // Ends a running iperf3 (SIGTERM, then SIGKILL); its results still come, marked stopped.
  void stop();
  bool active() const noexcept { return thread_.joinable(); }

  // What is due, each once: the port a server listens on, then the results (the thread joined).
  std::optional<Iperf3ListeningReply> take_listening();
  std::optional<Iperf3ResultsEvent> take_results();

 private:
  void run(Iperf3Request request);
  void wake();

  int wake_fd_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::optional<Iperf3ListeningReply> listening_;
  std::optional<Iperf3ResultsEvent> results_;
};

// The results a finished process gives: the report read from its --json stdout, and the failure:
// iperf3's own error member (it exits 0 after one in --json mode), else its exit status, else why
// its output could not be read.
void read_iperf3_output(Iperf3ResultsEvent& results, std::string_view out, std::string_view err);

}  // namespace rocehil::agent
