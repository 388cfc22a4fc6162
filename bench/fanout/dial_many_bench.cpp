// N agents dialing in to one controller on this machine, as plain processes (4,096 network
// namespaces do not fit here): `rocehil agent --connect 127.0.0.1:PORT --as pI`, started straight
// from this process (no ssh: what is measured is the controller's side), each with the run's
// secret in its environment. Prints JSON: seconds from the first start to every agent's hello,
// then one session opened on every agent and a hello through each (what a case's setup does),
// and the controller's CPU seconds and memory per agent. With --ring: then a ring allreduce over
// every agent (soft provider, each rank on its own loopback address 127.X.Y.Z), as a case runs
// it: setup, connect, a start at one agreed time, results; seconds for each step. With --fork the
// agents are not executed but forked from this process, already loaded: what each one's start
// costs (exec, ~100 shared libraries, OpenSSL's set-up; ~16 ms of CPU here) is taken out, as on
// a cluster where every host pays its own in parallel, and what is left is the controller's
// side and the handshakes.
#include <fcntl.h>
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
#include <thread>
#include <vector>

#include "rocehil/agent/dial_home.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/remote/dialed_agents.hpp"
#include "rocehil/run/collective_run.hpp"
#include "rocehil/traffic/collective.hpp"

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

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Waits for a reply of type T from each link, all within `timeout`; how many came. The first
// few links without one are named on stderr (a stalled collective: where to look).
template <typename T>
std::size_t await_all(std::vector<std::unique_ptr<remote::AgentLink>>& links,
                      std::vector<T>* replies, std::chrono::seconds timeout) {
  std::size_t got = 0, missing = 0;
  const auto deadline = Clock::now() + timeout;
  for (auto& l : links) {
    while (true) {
      auto reply = l->receive(deadline);
      if (!reply) {
        if (missing++ < 5)
          fmt::print(stderr, "{}: no answer within {} s\n", l->name(), timeout.count());
        break;
      }
      if (auto* error = std::get_if<agent::ErrorReply>(&reply->body)) {
        if (got == 0) fmt::print(stderr, "{}: {}\n", l->name(), error->message);
        break;
      }
      if (auto* wanted = std::get_if<T>(&reply->body)) {
        ++got;
        if (replies != nullptr) replies->push_back(std::move(*wanted));
        break;
      }
    }
  }
  return got;
}

// Sends each link its request, then waits for a reply of type T from each.
template <typename T, typename Make>
std::size_t ask_all(std::vector<std::unique_ptr<remote::AgentLink>>& links, std::uint64_t id,
                    Make make, std::vector<T>* replies, std::chrono::seconds timeout) {
  for (std::size_t r = 0; r < links.size(); ++r) links[r]->send(agent::Request{id, make(r)});
  return await_all<T>(links, replies, timeout);
}

// A ring allreduce of `bytes` over every link, one rank each; the JSON members of its steps.
// `finish`: how long its ranks may take to finish; 0: stopped once all have started (on 2 cores
// a 4,096-rank ring is 16.8 M rank-steps of syscalls).
std::string ring_allreduce(std::vector<std::unique_ptr<remote::AgentLink>>& links,
                           std::uint64_t bytes, std::chrono::milliseconds start_delay,
                           std::chrono::seconds finish) {
  const int ranks = static_cast<int>(links.size());
  namespace traffic = rocehil::traffic;
  const auto plan = traffic::make_plan(
      {.pattern = traffic::Pattern::ring_allreduce, .ranks = ranks, .bytes = bytes});
  const auto began = Clock::now();
  std::vector<agent::SetupReply> setups;
  const std::size_t set_up = ask_all<agent::SetupReply>(
      links, 10,
      [&](std::size_t r) {
        agent::SetupRequest s;
        s.provider = "soft";
        s.address = fmt::format("127.{}.{}.{}", 1 + r / 62500, r / 250 % 250 + 1, r % 250 + 1);
        s.workload = agent::Workload::collective;
        s.message_bytes = static_cast<std::uint32_t>(bytes);
        s.collective = agent::CollectiveSetup{.pattern = "allreduce",
                                              .ranks = static_cast<std::uint32_t>(ranks),
                                              .rank = static_cast<std::uint32_t>(r)};
        return s;
      },
      &setups, std::chrono::seconds(120));
  const double setup_s = since(began);
  fmt::print(stderr, "ring: {} of {} set up at {:.3f} s\n", set_up, links.size(), since(began));
  if (set_up != links.size())
    return fmt::format("\"ring_set_up\": {}, \"ring_setup_s\": {:.3f}", set_up, setup_s);
  std::vector<std::vector<agent::PeerEndpoint>> endpoints;
  for (const auto& s : setups) endpoints.push_back(s.endpoints);
  const auto connecting = Clock::now();
  const std::size_t connected = ask_all<agent::ConnectedReply>(
      links, 11,
      [&](std::size_t r) {
        return agent::ConnectRequest{
            rocehil::run::peers_for(*plan, static_cast<int>(r), 1, endpoints)};
      },
      nullptr, std::chrono::seconds(120));
  const double connect_s = since(began);
  fmt::print(stderr, "ring: {} of {} connected at {:.3f} s\n", connected, links.size(),
             since(began));
  // As rocehil run starts a collective (collective_run.hpp).
  start_delay = rocehil::run::start_delay_after(start_delay, Clock::now() - connecting);
  const std::int64_t at_ns =
      rocehil::wall_clock_ns() +
      std::chrono::duration_cast<std::chrono::nanoseconds>(start_delay).count();
  const std::size_t started = ask_all<agent::StartedReply>(
      links, 12,
      [&](std::size_t) {
        return agent::StartRequest{.at_ns = at_ns,
                                   .seconds = 2,
                                   .iterations = 1,
                                   .warmup_seconds = 0,
                                   .warmup_iterations = 0,
                                   .stats_ms = 0};
      },
      nullptr, std::chrono::seconds(120));
  const double started_s = since(began);
  fmt::print(stderr, "ring: {} of {} started at {:.3f} s\n", started, links.size(), since(began));
  const bool before_start_time = rocehil::wall_clock_ns() < at_ns;
  if (finish.count() == 0) {
    // Past the start time, with the traffic flowing for a second, then stopped.
    std::this_thread::sleep_for(std::chrono::nanoseconds(
        std::max<std::int64_t>(0, at_ns - rocehil::wall_clock_ns()) + 1'000'000'000));
    for (auto& l : links) l->send(agent::Request{13, agent::StopRequest{}});
  }
  std::vector<agent::ResultsEvent> results;
  const std::size_t finished = await_all<agent::ResultsEvent>(
      links, &results, finish.count() == 0 ? std::chrono::seconds(120) : finish);
  std::uint64_t errors = 0;
  std::string first_error;
  for (const auto& r : results) {
    errors += r.errors;
    if (first_error.empty()) first_error = r.first_error;
  }
  return fmt::format(
      "\"ring_ranks\": {}, \"ring_setup_s\": {:.3f}, \"ring_connected\": {}, "
      "\"ring_connected_s\": {:.3f}, \"ring_start_delay_s\": {:.3f}, \"ring_started\": {}, "
      "\"ring_started_s\": {:.3f}, "
      "\"ring_every_start_before_its_time\": {}, \"ring_finished\": {}, \"ring_done_s\": "
      "{:.3f}, \"ring_stopped_once_started\": {}, \"ring_errors\": {}, \"ring_first_error\": "
      "\"{}\"",
      ranks, setup_s, connected, connect_s, std::chrono::duration<double>(start_delay).count(),
      started, started_s, before_start_time, finished, since(began), finish.count() == 0, errors,
      first_error);
}

// The body of a forked agent (--fork): this process's copy of the code, stdio on /dev/null and
// none of the bench's descriptors (its listening socket stays the bench's alone).
int forked_agent(std::uint16_t port, const rocehil::channel::RunSecret& secret,
                 const std::string& as) {
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
  }
  close_range(3, ~0u, 0);
  try {
    agent::DialOptions options;
    options.address = "127.0.0.1";
    options.port = port;
    options.run_id = "bench";
    options.host_name = as;
    return agent::run_agent_dialing(options, secret, "bench");
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", as, e.what());
    return 3;
  }
}

// --fork: a process forked early, small, that forks every agent once it is told the port, then
// reports how many ended with status 0. Forking 4,096 agents from the bench itself would copy
// its page tables (the controller's 150 MiB) each time: 12 s of the controller's CPU.
class Spawner {
 public:
  Spawner(const rocehil::channel::RunSecret& secret, std::size_t agents) {
    int go[2], done[2];
    if (pipe(go) != 0 || pipe(done) != 0) throw rocehil::system_error("pipe", errno);
    pid_ = fork();
    if (pid_ < 0) throw rocehil::system_error("fork", errno);
    if (pid_ == 0) {
      close(go[1]);
      close(done[0]);
      std::uint16_t port = 0;
      if (read(go[0], &port, sizeof port) != sizeof port) _exit(2);
      std::vector<pid_t> children;
      for (std::size_t i = 0; i < agents; ++i) {
        const pid_t pid = fork();
        if (pid == 0) {
          close(go[0]);
          close(done[1]);
          _exit(forked_agent(port, secret, fmt::format("p{}", i)));
        }
        if (pid > 0) children.push_back(pid);
      }
      std::uint64_t clean = 0;
      for (const pid_t pid : children) {
        int status = 0;
        if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
          ++clean;
      }
      _exit(write(done[1], &clean, sizeof clean) == sizeof clean ? 0 : 2);
    }
    close(go[0]);
    close(done[1]);
    go_ = go[1];
    done_ = done[0];
  }
  Spawner(const Spawner&) = delete;
  Spawner& operator=(const Spawner&) = delete;
  ~Spawner() {
    close(go_);
    close(done_);
    waitpid(pid_, nullptr, 0);
  }
  void go(std::uint16_t port) {
    if (write(go_, &port, sizeof port) != sizeof port) throw rocehil::system_error("write", errno);
  }
  // Waits for every agent to end.
  std::size_t ended_cleanly() {
    std::uint64_t clean = 0;
    return read(done_, &clean, sizeof clean) == sizeof clean ? clean : 0;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1, done_ = -1;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("N agents dialing in to one controller: time to every hello, controller cost");
  std::string rocehil;
  std::size_t agents = 256;
  app.add_option("rocehil", rocehil, "The rocehil binary the agents run")->required();
  app.add_option("--agents", agents, "How many")->check(CLI::Range(1, 8192));
  bool ring = false;
  std::uint64_t ring_bytes = 4096;
  unsigned start_delay_ms = 500;
  unsigned finish_s = 300;
  app.add_option("--ring-finish-s", finish_s,
                 "How long the ring may take to finish; 0: stop it once every rank has started");
  app.add_flag("--ring", ring, "Then a ring allreduce over every agent (soft, loopback)");
  bool fork_agents = false;
  app.add_flag("--fork", fork_agents,
               "Fork the agents from this process instead of executing rocehil: each agent's "
               "own start cost taken out");
  app.add_option("--ring-bytes", ring_bytes, "Its size")->check(CLI::Range(1, 1 << 30));
  app.add_option("--start-delay-ms", start_delay_ms,
                 "From the start request to the agreed start time (rocehil run: 500)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto secret = rocehil::channel::RunSecret::generate();
    // Forked before the controller exists, while this process is small and has one thread.
    std::optional<Spawner> spawner;
    if (fork_agents) spawner.emplace(secret, agents);
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
    if (spawner) {
      spawner->go(hub->port());
      next = agents;
    }
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
    std::string ring_json;
    if (ring && answered == agents) {
      const double cpu_ring_before = cpu_seconds();
      ring_json = ring_allreduce(links, ring_bytes, std::chrono::milliseconds(start_delay_ms),
                                 std::chrono::seconds(finish_s));
      ring_json += fmt::format(
          ", \"controller_cpu_s_ring\": {:.3f}, \"controller_rss_mib_ring\": "
          "{:.1f}",
          cpu_seconds() - cpu_ring_before, rss_mib());
    }
    links.clear();
    const std::size_t joined = hub->joined_count();
    const auto closed = Clock::now();
    // The controller goes: every agent ends on its own.
    hub.reset();
    std::size_t ended = 0;
    if (spawner) ended = spawner->ended_cleanly();
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
        "\"rss_kib_per_agent_with_session\": {:.1f}{}{}}}\n",
        agents, joined, hello_s, session_s, answered, end_s, ended, cpu_join, cpu_all, rss_sessions,
        (rss_joined - rss_before) * 1024.0 / static_cast<double>(agents),
        (rss_sessions - rss_before) * 1024.0 / static_cast<double>(agents),
        ring_json.empty() ? "" : ", ", ring_json);
  } catch (const rocehil::Error& e) {
    fmt::print(stderr, "rocehil-bench-dial-many: {}\n", e.what());
    return 3;
  }
  return 0;
}
