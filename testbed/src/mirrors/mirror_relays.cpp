#include "mirrors/mirror_relays.hpp"

#include <fmt/format.h>

#include <charconv>

#include "tools/files.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

std::vector<std::string> mirror_relay_argv(const MirrorSession& session, const Topology& t,
                                           const TestbedPaths& paths, const std::string& rocehil) {
  const Namespace& spine = *t.find(session.spine);
  const RemoteMirror& r = *session.remote;
  std::vector<std::string> argv = {rocehil,
                                   "testbed",
                                   "mirror-relay",
                                   "--netns",
                                   spine.netns,
                                   "--mode",
                                   std::string(to_string(r.mode)),
                                   "--session",
                                   std::to_string(r.session),
                                   "--source",
                                   r.source,
                                   "--destination",
                                   r.destination,
                                   "--interface",
                                   r.relay_interface};
  for (const auto& p : r.ports) argv.insert(argv.end(), {"--port", p});
  argv.insert(argv.end(), {"--truncate", std::to_string(r.truncate), "--pid-file",
                           paths.relay_pid(spine), "--counters-file", paths.relay_counters(spine)});
  return argv;
}

void start_mirror_relays(const Topology& t, const TestbedPaths& paths, const std::string& rocehil,
                         const StepReporter& report) {
  std::vector<const MirrorSession*> remote;
  for (const auto& m : t.mirrors)
    if (m.remote) remote.push_back(&m);
  if (remote.empty()) return;
  const RemoteMirror& first = *remote.front()->remote;
  report(fmt::format("mirror relays: {} spines send {} to {}", remote.size(), to_string(first.mode),
                     first.destination));
  for (const MirrorSession* m : remote)
    run_checked(fmt::format("starting the mirror relay in {}", t.find(m->spine)->netns),
                mirror_relay_argv(*m, t, paths, rocehil));
}

namespace {

// The relay named in `pid_file`, if it runs: its pid, else 0 and why not in `detail`.
int running_relay(const std::string& pid_file, const std::string& netns, std::string& detail) {
  const std::string text = read_file_or_empty(pid_file);
  int pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (text.empty() || ec != std::errc() || pid <= 0) {
    detail = fmt::format("no pid in {}", pid_file);
    return 0;
  }
  // A pid the kernel gave to another process since is not the relay.
  if (running_pid(pid_file, {"mirror-relay", netns}) == 0) {
    detail = fmt::format("process {} (from {}) is not running", pid, pid_file);
    return 0;
  }
  return pid;
}

}  // namespace

std::vector<RelayStatus> mirror_relay_status(const Topology& t, const TestbedPaths& paths) {
  std::vector<RelayStatus> out;
  for (const auto& m : t.mirrors) {
    if (!m.remote) continue;
    const Namespace& spine = *t.find(m.spine);
    std::string detail;
    const int pid = running_relay(paths.relay_pid(spine), spine.netns, detail);
    // Built as one aggregate: gcc 12 warns falsely about member-wise assignment of the session.
    out.push_back({m.spine, spine.netns, *m.remote, pid != 0, pid, std::move(detail),
                   read_relay_counters(paths.relay_counters(spine))});
  }
  return out;
}

}  // namespace rocehil::testbed
