// N agents dialing in to one controller on this machine, as plain processes (4,096 network
// namespaces do not fit here): `rocehil agent --connect 127.0.0.1:PORT --as pI`, started straight
// from this process (no ssh: what is measured is the controller's side), each with the run's
// secret in its environment. Prints JSON: seconds from the first start to every agent's hello,
// then one session opened on every agent and a hello through each (what a case's setup does),
// and the controller's CPU seconds and memory per agent.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/dialed_agents.hpp"

extern char** environ;

namespace remote = rocehil::remote;
namespace agent = rocehil::agent;
using Clock = std::chrono::steady_clock;

namespace {

struct Quiet : remote::DialedAgentsEvents {
  std::size_t refused = 0, lost = 0;
  void agent_joined(const std::string&, const std::string&) override {}
  void agent_refused(const std::string&, const std::string& why) override {
    if (refused++ < 3) fmt::print(stderr, "refused: {}\n", why);
  }
  void agent_lost(const std::string&, const std::string& why) override {
    if (lost++ < 3) fmt::print(stderr, "lost: {}\n", why);
  }
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double rss_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("N agents dialing in to one controller: time to every hello, controller cost");
  std::string rocehil;
  std::size_t agents = 256;
  app.add_option("rocehil", rocehil, "The rocehil binary the agents run")->required();
  app.add_option("--agents", agents, "How many")->check(CLI::Range(1, 8192));
  CLI11_PARSE(app, argc, argv);
  try {
    const auto secret = rocehil::channel::RunSecret::generate();
    std::vector<remote::ExpectedHost> expected;
    for (std::size_t i = 0; i < agents; ++i) expected.push_back({fmt::format("p{}", i), {}});
    Quiet quiet;
    remote::DialedAgentsOptions options;
    options.listen_address = "127.0.0.1";
    options.limits.per_address = agents;  // every agent comes from this one address
    options.hello_deadline = std::chrono::seconds(120);
    options.limits.handshake_deadline = std::chrono::seconds(120);
    const double rss_before = rss_mib();
    const double cpu_before = cpu_seconds();
    std::optional<remote::DialedAgents> hub;
    hub.emplace(secret, "bench", expected, options, quiet);

    const std::string connect = fmt::format("127.0.0.1:{}", hub->port());
    const std::string secret_env = "ROCEHIL_RUN_SECRET=" + secret.for_launcher();
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    env.push_back(const_cast<char*>(secret_env.c_str()));
    env.push_back(nullptr);
    std::vector<pid_t> pids;
    const auto start = Clock::now();
    std::size_t next = 0;
    // Started while the loop turns: an agent waits for its handshake, not for the others' starts.
    while (hub->joined_count() < agents && Clock::now() - start < std::chrono::seconds(300)) {
      for (std::size_t batch = 0; batch < 64 && next < agents; ++batch, ++next) {
        const std::string as = fmt::format("p{}", next);
        const char* args[] = {rocehil.c_str(), "agent", "--connect", connect.c_str(), "--run-id",
                              "bench",         "--as",  as.c_str(),  nullptr};
        pid_t pid = 0;
        if (posix_spawn(&pid, rocehil.c_str(), nullptr, nullptr, const_cast<char**>(args),
                        env.data()) != 0)
          throw rocehil::system_error("posix_spawn", errno);
        pids.push_back(pid);
      }
      hub->turn(std::chrono::milliseconds(next < agents ? 0 : 20));
    }
    const double hello_s = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu_join = cpu_seconds() - cpu_before;
    const double rss_joined = rss_mib();

    // A session on every agent and a hello through each, all in flight at once.
    const auto round = Clock::now();
    std::vector<std::unique_ptr<remote::AgentLink>> links;
    for (std::size_t i = 0; i < agents && hub->hello(fmt::format("p{}", i)) != nullptr; ++i)
      links.push_back(hub->open_session(fmt::format("p{}", i), fmt::format("p{}", i)));
    for (auto& l : links) l->send(agent::Request{1, agent::HelloRequest{}});
    std::size_t answered = 0;
    for (auto& l : links) {
      const auto reply = l->receive(Clock::now() + std::chrono::seconds(60));
      if (reply && std::holds_alternative<agent::HelloReply>(reply->body)) ++answered;
    }
    const double session_s = std::chrono::duration<double>(Clock::now() - round).count();
    const double rss_sessions = rss_mib();
    const double cpu_all = cpu_seconds() - cpu_before;
    links.clear();
    const std::size_t joined = hub->joined_count();
    const auto closed = Clock::now();
    // The controller goes: every agent ends on its own.
    hub.reset();
    std::size_t ended = 0;
    for (const pid_t pid : pids) {
      int status = 0;
      if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++ended;
    }
    const double end_s = std::chrono::duration<double>(Clock::now() - closed).count();
    fmt::print(
        "{{\"agents\": {}, \"joined\": {}, \"every_hello_s\": {:.3f}, \"session_round_s\": "
        "{:.3f}, \"answered\": {}, \"all_ended_s\": {:.3f}, \"ended_cleanly\": {}, "
        "\"controller_cpu_s_join\": {:.3f}, \"controller_cpu_s\": {:.3f}, "
        "\"controller_rss_mib\": {:.1f}, \"rss_kib_per_agent\": {:.1f}, "
        "\"rss_kib_per_agent_with_session\": {:.1f}}}\n",
        agents, joined, hello_s, session_s, answered, end_s, ended, cpu_join, cpu_all, rss_sessions,
        (rss_joined - rss_before) * 1024.0 / static_cast<double>(agents),
        (rss_sessions - rss_before) * 1024.0 / static_cast<double>(agents));
  } catch (const rocehil::Error& e) {
    fmt::print(stderr, "rocehil-bench-dial-many: {}\n", e.what());
    return 3;
  }
  return 0;
}
