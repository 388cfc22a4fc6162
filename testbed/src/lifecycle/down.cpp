#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "rocehil/common/error.hpp"
#include "rocehil/testbed/slurm_cluster.hpp"
#include "rocehil/testbed/state.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "switches/switch_agents.hpp"
#include "tools/files.hpp"
#include "tools/host_checks.hpp"
#include "tools/live.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;

// Whether process `pid` is in a network namespace that holds one of the testbed's lldpd or
// AgentX sockets (public_run_dir()/rocehil-<id>-*): a namespace of the testbed even when its name
// is gone (`ip netns del` by hand, say), where `ip netns pids` no longer finds it. lldpd rewrites
// its command line, so this is how down finds one there. Only processes outside our own
// namespace are read: the root namespace's socket table can be long.
bool in_testbed_namespace(const std::string& pid, const std::string& sockets,
                          const std::string& own_netns) {
  std::error_code ec;
  const auto netns = fs::read_symlink("/proc/" + pid + "/ns/net", ec);
  if (ec || netns.string() == own_netns) return false;
  return read_file_or_empty("/proc/" + pid + "/net/unix").find(sockets) != std::string::npos;
}

// Processes in the testbed's namespaces (lldpd among them: it rewrites its command line), and
// any daemon whose command line names it (an sshd, snmpd or FRR daemon whose namespace is
// already gone, for example: their files carry the namespace's name).
std::set<pid_t> testbed_processes(std::string_view id, const std::vector<std::string>& namespaces) {
  std::set<pid_t> pids;
  for (const auto& ns : namespaces) {
    const CommandResult r = run({"ip", "netns", "pids", ns});
    std::string_view rest = r.out;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string line(rest.substr(0, nl));
      if (!line.empty()) pids.insert(static_cast<pid_t>(std::stol(line)));
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
  const std::string marker = fmt::format("rocehil-{}-", id);
  const std::string sockets = TestbedPaths::public_run_dir() + "/" + marker;
  std::error_code ec;
  const std::string own_netns = fs::read_symlink("/proc/self/ns/net", ec).string();
  const pid_t self = ::getpid();
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(proc)) {
      const std::string name = entry->d_name;
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::string cmdline = read_file_or_empty("/proc/" + name + "/cmdline");
      for (char& c : cmdline)
        if (c == '\0') c = ' ';
      const pid_t pid = static_cast<pid_t>(std::stol(name));
      // `ip netns exec`, `rocehil testbed down` and our own tools name the testbed too but are
      // not what it left running.
      const bool daemon = cmdline.find("sshd") != std::string::npos ||
                          cmdline.find("snmpd") != std::string::npos ||
                          cmdline.find("snmp-counters") != std::string::npos ||
                          cmdline.find("mirror-relay") != std::string::npos ||
                          cmdline.find("qemu-system") != std::string::npos ||
                          cmdline.find("/usr/lib/frr/") != std::string::npos;
      if (pid != self && ((cmdline.find(marker) != std::string::npos && daemon) ||
                          in_testbed_namespace(name, sockets, own_netns)))
        pids.insert(pid);
    }
    ::closedir(proc);
  }
  pids.erase(self);
  return pids;
}

int stop_processes(const std::set<pid_t>& pids) {
  for (pid_t pid : pids) ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (pid_t pid : pids) {
    while (process_alive(pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (process_alive(pid)) ::kill(pid, SIGKILL);
  }
  return static_cast<int>(pids.size());
}

}  // namespace

DownResult down(const std::string& dir_option, const std::string& id_option,
                const StepReporter& report) {
  const auto start = std::chrono::steady_clock::now();
  require_root("down");
  require_tools({"ip"});
  if (id_option.empty() && dir_option.empty())
    throw input_error("give --dir DIR (the testbed's directory) or --id ID");
  const std::string dir = dir_option.empty() ? std::string() : absolute_dir(dir_option);
  const TestbedPaths paths{dir};
  std::optional<TestbedState> state;
  if (!dir.empty()) state = read_state(paths.state());
  DownResult result;
  result.id = !id_option.empty() ? id_option : state ? state->options.id : derive_id(dir);

  result.namespaces = testbed_namespaces(result.id);
  report(fmt::format("testbed {}: {} namespaces", result.id, result.namespaces.size()));
  result.processes = stop_processes(testbed_processes(result.id, result.namespaces));
  // The slurmds went with the namespaces' processes; slurmctld and munged run beside them.
  if (!dir.empty()) result.processes += stop_slurm(paths, result.id);
  remove_switch_agent_files(paths, result.id);
  if (!result.namespaces.empty()) {
    std::string batch;
    for (const auto& ns : result.namespaces) batch += fmt::format("netns del {}\n", ns);
    run_checked("removing namespaces", {"ip", "-force", "-batch", "-"}, batch);
  }
  // Deleting a namespace deletes the veths in it and their peers; the bridge stays.
  result.links = root_links(result.id);
  for (const auto& link : result.links) run({"ip", "link", "del", link});
  if (!root_links(result.id).empty())
    throw Error(ExitCode::infrastructure,
                fmt::format("links of testbed {} are still in the root namespace after 'ip link "
                            "del'; see 'ip link show'",
                            result.id));

  if (state) {
    state->phase = "down";
    write_state(paths.state(), *state);
    std::error_code ignored;
    fs::remove(paths.inventory(), ignored);
    for (const auto& entry : fs::directory_iterator(paths.run_dir(), ignored))
      if (entry.path().extension() == ".pid") fs::remove(entry.path(), ignored);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace rocehil::testbed
