#include "perftest_task.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "rocehil/common/error.hpp"
#include "rocehil/perftest/child_process.hpp"
#include "rocehil/perftest/command.hpp"
#include "rocehil/traffic/nic_counters.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// perftest leaves on SIGTERM at once; one that does not within this is killed.
constexpr auto stop_grace = 2s;
// A probe (--version, --help) prints and exits; one that hangs is not waited on.
constexpr auto probe_limit = 5s;

struct Probe {
  std::string out;
  bool finished = false;
};

Probe probe(const std::string& program, const char* flag) {
  Probe p;
  try {
    perftest::ChildProcess child({program, flag});
    const auto until = Clock::now() + probe_limit;
    while (!(p.finished = child.poll(50ms)) && Clock::now() < until) {
    }
    p.out = child.out() + child.err();
  } catch (const Error&) {
  }
  return p;
}

std::string tail(std::string text, std::size_t bytes) {
  if (text.size() > bytes) text.erase(0, text.size() - bytes);
  return text;
}

// The NIC perftest runs on, for its counters: the named device, or the first verbs device as
// perftest picks it.
traffic::NicRef nic_of(const PerftestRequest& r) {
  traffic::NicRef nic{.rdma_device = r.device, .port = r.port, .netdev = {}};
  if (nic.rdma_device.empty())
    for (const traffic::DeviceInfo& d : traffic::list_devices())
      if (d.provider == "verbs") {
        nic.rdma_device = d.name;
        break;
      }
  if (!nic.rdma_device.empty()) nic.netdev = traffic::netdev_of_rdma_device(nic.rdma_device);
  return nic;
}

// A private directory for perftest's JSON file: perftest creates the file with O_TRUNC, so it
// must not be a path another run (or user) could choose.
std::string private_directory() {
  char pattern[] = "/tmp/rocehil-perftest-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw system_error("perftest: a directory for its JSON", errno);
  return pattern;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string perftest_version_in(std::string_view output) {
  constexpr std::string_view key = "Version:";
  const auto at = output.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view rest = output.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  std::string version;
  for (const char c : rest) {
    if (c <= ' ' || c > '~' || version.size() >= 32) break;
    version += c;
  }
  return version;
}

void read_perftest_output(PerftestResultsEvent& r, std::string_view out, std::string_view err,
                          std::string_view json_text) {
  std::string unreadable;
  if (!json_text.empty()) {
    perftest::ParseResult parsed = perftest::parse_json(json_text);
    if (parsed.report)
      r.report = std::move(parsed.report);
    else
      unreadable = "its JSON file: " + parsed.error;
  }
  if (!r.report) {
    perftest::ParseResult parsed = perftest::parse_text(out);
    if (parsed.report)
      r.report = std::move(parsed.report);
    else
      unreadable += (unreadable.empty() ? "" : "; ") + ("its output: " + parsed.error);
  }
  std::string all(out);
  if (!err.empty()) all += fmt::format("{}{}", all.empty() || all.back() == '\n' ? "" : "\n", err);
  r.output = tail(all, max_perftest_output_bytes);
  if (r.exit_code == 0 && r.report) return;
  const std::string own = perftest::find_error(all);
  if (!own.empty())
    r.error = own;
  else if (r.exit_code != 0)
    r.error = r.exit_code < 0 ? fmt::format("perftest was ended by signal {}", -r.exit_code)
                              : fmt::format("perftest exited with status {}", r.exit_code);
  else
    r.error = "perftest printed no result that could be read: " + unreadable;
}

AgentPerftest::AgentPerftest(int wake_fd) : wake_fd_(wake_fd) {}

AgentPerftest::~AgentPerftest() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void AgentPerftest::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void AgentPerftest::start(const PerftestRequest& request) {
  if (active())
    throw input_error(
        "perftest: a perftest run is in progress here; wait for its results or "
        "send stop");
  stop_ = false;
  listening_.reset();
  results_.reset();
  thread_ = std::thread([this, request] { run(request); });
}

void AgentPerftest::stop() {
  stop_ = true;
}

std::optional<PerftestListeningReply> AgentPerftest::take_listening() {
  const std::lock_guard lock(mutex_);
  return std::exchange(listening_, std::nullopt);
}

std::optional<PerftestResultsEvent> AgentPerftest::take_results() {
  std::optional<PerftestResultsEvent> r;
  {
    const std::lock_guard lock(mutex_);
    r = std::exchange(results_, std::nullopt);
  }
  if (r && thread_.joinable()) thread_.join();
  return r;
}

void AgentPerftest::run(PerftestRequest request) {
  PerftestResultsEvent r;
  r.role = request.role;
  r.tool = request.tool;
  const auto started = Clock::now();
  std::string directory;
  try {
    perftest::CommandOptions options = perftest_options(request);
    const std::string program(perftest::program(options.tool));
    if (!perftest::find_on_path(program)) {
      r.exit_code = 127;  // as a shell says "command not found"
      throw input_error(
          fmt::format("{} is not installed on this host (Debian: apt-get install "
                      "perftest)",
                      program));
    }
    r.version = perftest_version_in(probe(program, "--version").out);
    // --out_json came with perftest 5.98; older ones would refuse the option, so ask --help.
    if (probe(program, "--help").out.find("--out_json") != std::string::npos) {
      directory = private_directory();
      options.json_file = directory + "/perftest.json";
    }
    if (request.role == Role::server && request.tcp_port == 0)
      options.tcp_port = perftest::free_tcp_port();
    r.command = perftest::command_words(options);

    const traffic::NicRef nic = nic_of(request);
    std::optional<traffic::NicCounterSnapshot> before;
    if (!nic.rdma_device.empty()) before = traffic::read_nic_counters(nic);

    perftest::ChildProcess child(r.command);
    const double limit_s = perftest_time_limit_s(request);
    const auto deadline = started + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limit_s));
    bool listening = request.role != Role::server;
    bool timed_out = false;
    std::optional<Clock::time_point> kill_at;
    while (!child.poll(50ms)) {
      const auto now = Clock::now();
      if (!listening && perftest::tcp_port_listening(options.tcp_port)) {
        listening = true;
        {
          const std::lock_guard lock(mutex_);
          listening_ = PerftestListeningReply{options.tcp_port};
        }
        wake();
      }
      if (!kill_at && (stop_ || now > deadline)) {
        r.stopped = stop_;
        timed_out = !stop_;
        child.signal(SIGTERM);
        kill_at = now + stop_grace;
      } else if (kill_at && now > *kill_at) {
        child.signal(SIGKILL);
      }
    }
    r.exit_code = child.exit_code();
    read_perftest_output(r, child.out(), child.err(),
                         options.json_file.empty() ? std::string() : read_text(options.json_file));
    if (timed_out)
      r.error = fmt::format("{} ran past its {:g} s timeout and was ended{}", program, limit_s,
                            r.error.empty() ? "" : "; it had said: " + r.error);
    if (before) r.nics = {traffic::counter_delta(*before, traffic::read_nic_counters(nic))};
  } catch (const std::exception& e) {
    if (r.exit_code == 0) r.exit_code = -1;
    r.error = e.what();
  }
  if (!directory.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  {
    const std::lock_guard lock(mutex_);
    results_ = std::move(r);
  }
  wake();
}

}  // namespace rocehil::agent
