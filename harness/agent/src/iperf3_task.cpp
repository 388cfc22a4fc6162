#include "iperf3_task.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/iperf/command.hpp"
#include "rocehil/iperf/report.hpp"
#include "rocehil/perftest/child_process.hpp"

namespace rocehil::agent {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// iperf3 leaves on SIGTERM at once; one that does not within this is killed.
constexpr auto iperf3_stop_grace = 2s;

std::string last_bytes(std::string text, std::size_t bytes) {
  if (text.size() > bytes) text.erase(0, text.size() - bytes);
  return text;
}

}  // namespace

void read_iperf3_output(Iperf3ResultsEvent& r, std::string_view out, std::string_view err) {
  iperf::ParseResult parsed = iperf::parse_json(out);
  if (parsed.report) r.report = std::move(parsed.report);
  std::string all(out);
  if (!err.empty()) all += fmt::format("{}{}", all.empty() || all.back() == '\n' ? "" : "\n", err);
  r.output = last_bytes(all, max_perftest_output_bytes);
  if (r.report && !r.report->error.empty())
    r.error = r.report->error;
  else if (r.exit_code != 0)
    r.error = r.exit_code < 0 ? fmt::format("iperf3 was ended by signal {}", -r.exit_code)
                              : fmt::format("iperf3 exited with status {}", r.exit_code);
  else if (!r.report)
    r.error = "iperf3 printed no result that could be read: " + parsed.error;
}

AgentIperf3::AgentIperf3(int wake_fd) : wake_fd_(wake_fd) {}

AgentIperf3::~AgentIperf3() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void AgentIperf3::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void AgentIperf3::start(const Iperf3Request& request) {
  if (active())
    throw input_error(
        "iperf3: an iperf3 run is in progress here; wait for its results or send stop");
  stop_ = false;
  listening_.reset();
  results_.reset();
  thread_ = std::thread([this, request] { run(request); });
}

void AgentIperf3::stop() {
  stop_ = true;
}

std::optional<Iperf3ListeningReply> AgentIperf3::take_listening() {
  const std::lock_guard lock(mutex_);
  return std::exchange(listening_, std::nullopt);
}

std::optional<Iperf3ResultsEvent> AgentIperf3::take_results() {
  std::optional<Iperf3ResultsEvent> r;
  {
    const std::lock_guard lock(mutex_);
    r = std::exchange(results_, std::nullopt);
  }
  if (r && thread_.joinable()) thread_.join();
  return r;
}

void AgentIperf3::run(Iperf3Request request) {
  Iperf3ResultsEvent r;
  r.role = request.role;
  // The agreed start is a wall-clock time: slept to on the wall clock, a stop still seen.
  for (std::int64_t left; (left = request.at_ns - wall_clock_ns()) > 0 && !stop_;)
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(left, 20'000'000)));
  const auto started = Clock::now();
  try {
    if (stop_) {
      r.stopped = true;
      throw input_error("iperf3 was stopped before its start time");
    }
    iperf::CommandOptions options = iperf3_options(request);
    if (!perftest::find_on_path("iperf3")) {
      r.exit_code = 127;  // as a shell says "command not found"
      throw input_error("iperf3 is not installed on this host (Debian: apt-get install iperf3)");
    }
    // The control port; iperf3 -s listens on it for TCP and UDP tests alike.
    if (options.server) options.port = perftest::free_tcp_port();
    r.command = iperf::command_words(options);

    perftest::ChildProcess child(r.command);
    const double limit_s = iperf3_time_limit_s(request);
    const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limit_s));
    bool listening = !options.server;
    bool timed_out = false;
    std::optional<Clock::time_point> kill_at;
    while (!child.poll(50ms)) {
      const auto now = Clock::now();
      if (!listening && perftest::tcp_port_listening(options.port)) {
        listening = true;
        {
          const std::lock_guard lock(mutex_);
          listening_ = Iperf3ListeningReply{options.port};
        }
        wake();
      }
      if (!kill_at && (stop_ || now > deadline)) {
        r.stopped = stop_;
        timed_out = !stop_;
        child.signal(SIGTERM);
        kill_at = now + iperf3_stop_grace;
      } else if (kill_at && now > *kill_at) {
        child.signal(SIGKILL);
      }
    }
    r.exit_code = child.exit_code();
    read_iperf3_output(r, child.out(), child.err());
    if (timed_out)
      r.error = fmt::format("iperf3 ran past its {:g} s timeout and was ended{}", limit_s,
                            r.error.empty() ? "" : "; it had said: " + r.error);
  } catch (const std::exception& e) {
    if (r.exit_code == 0) r.exit_code = -1;
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  {
    const std::lock_guard lock(mutex_);
    results_ = std::move(r);
  }
  wake();
}

}  // namespace rocehil::agent
