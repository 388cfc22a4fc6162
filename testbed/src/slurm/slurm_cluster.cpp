#include "rocehil/testbed/slurm_cluster.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "rocehil/common/error.hpp"
#include "tools/files.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string short_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0)
    throw system_error("gethostname (slurmctld runs where SlurmctldHost names it)", errno);
  std::string s = name;
  return s.substr(0, s.find('.'));
}

// A fresh key for every testbed: its cluster trusts nothing signed elsewhere.
void write_munge_key(const SlurmPaths& p) {
  std::random_device random;
  std::string key(128, '\0');
  for (char& c : key) c = static_cast<char>(random() & 0xff);
  write_file(p.munge_key(), key, fs::perms::owner_read | fs::perms::owner_write);
}

// The pid in `pid_file`, when that process is alive and its command line names `program`.
pid_t daemon_pid(const std::string& pid_file, std::string_view program) {
  return static_cast<pid_t>(running_pid(pid_file, {program}));
}

bool stop_pid(pid_t pid) {
  if (pid <= 0 || ::kill(pid, SIGTERM) != 0) return false;
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (::kill(pid, 0) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  return true;
}

std::vector<std::string> sinfo_argv(const SlurmPaths& p) {
  return {"env", "SLURM_CONF=" + p.conf(), "sinfo", "--noheader", "--Node", "--format=%N %t"};
}

}  // namespace

SlurmPaths slurm_paths(const TestbedPaths& paths, const std::string& id) {
  return {paths.dir + "/slurm", id};
}

int slurmctld_port(int mgmt_octet) {
  return 17000 + mgmt_octet;
}

std::vector<const Namespace*> slurm_nodes(const Topology& t) {
  std::vector<const Namespace*> out;
  for (const auto& ns : t.namespaces)
    if (runs_sshd(ns)) out.push_back(&ns);
  return out;
}

std::string slurm_conf(const Topology& t, const SlurmPaths& p, const std::string& controller,
                       int port) {
  std::ostringstream s;
  s << "# Written by 'rocehil testbed up --slurm' for testbed " << t.id << ".\n"
    << "# A Slurm cluster over the testbed's namespaces; nothing here is shared with the "
       "machine's own.\n"
    << "ClusterName=rocehil-" << t.id << "\n"
    << "SlurmctldHost=" << controller << "(" << t.mgmt_gateway << ")\n"
    << "SlurmctldPort=" << port << "\n"
    << "SlurmdPort=6818\n"  // one slurmd per namespace: each has the port to itself
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << p.munge_socket() << "\n"
    << "StateSaveLocation=" << p.state_dir() << "\n"
    << "SlurmdSpoolDir=" << p.spool_dir() << "/%n\n"
    << "SlurmctldPidFile=" << p.slurmctld_pid() << "\n"
    << "SlurmdPidFile=" << p.spool_dir() << "/slurmd-%n.pid\n"
    << "SlurmctldLogFile=" << p.log_dir() << "/slurmctld.log\n"
    << "SlurmdLogFile=" << p.log_dir()
    << "/slurmd-%n.log\n"
    // No cgroups: a container has no writable hierarchy, and nothing here needs limits.
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "SelectType=select/linear\nSchedulerType=sched/builtin\nMpiDefault=none\n"
    << "PlugStackConfig=/dev/null\n"
    // A node that went down (its slurmd restarted, a test drained it) comes back by itself
    // when it answers again, unless it is drained.
    << "ReturnToService=2\n"
    // The namespaces share this machine's CPUs and memory: the configured values count.
    << "SlurmdParameters=config_overrides\n";
  std::string nodes;
  for (const Namespace* ns : slurm_nodes(t)) {
    s << "NodeName=" << ns->name << " NodeAddr=" << ns->mgmt_address << " CPUs=1 State=UNKNOWN\n";
    nodes += (nodes.empty() ? "" : ",") + ns->name;
  }
  s << "PartitionName=rocehil Nodes=" << nodes << " Default=YES MaxTime=INFINITE State=UP\n";
  return s.str();
}

std::string guest_slurmd_command(const SlurmPaths& p, const std::string& node) {
  const auto q = [](const std::string& word) { return single_quoted(word); };
  const std::string spool = p.spool_dir() + "/" + node;
  // slurmd wants /sys/fs/cgroup to exist as a file system even with nothing constrained (as in
  // a namespace: an empty tmpfs); mounted once, so a second start still runs.
  return fmt::format(
      "mkdir -p {} {} {} && (mountpoint -q /sys/fs/cgroup || mount -t tmpfs rocehil-cgroup "
      "/sys/fs/cgroup) && munged --socket={} --key-file={} --pid-file={} --log-file={} "
      "--seed-file={} && slurmd -f {} -N {}",
      q(p.munge_dir()), q(spool), q(p.log_dir()), q(p.munge_socket()), q(p.munge_key()),
      q(p.munged_pid()), q(p.log_dir() + "/munged-" + node + ".log"),
      q(p.munge_dir() + "/munged.seed"), q(p.conf()), q(node));
}

void start_slurm(const Topology& t, const TestbedPaths& paths, int mgmt_octet, bool guests,
                 const StepReporter& report) {
  const SlurmPaths p = slurm_paths(paths, t.id);
  std::error_code ec;
  fs::remove_all(p.state_dir(), ec);  // no jobs or drained nodes from a testbed before
  for (const auto& d :
       {p.dir, p.key_dir(), p.munge_dir(), p.state_dir(), p.spool_dir(), p.log_dir()})
    fs::create_directories(d);
  for (const Namespace* ns : slurm_nodes(t)) fs::create_directories(p.spool_dir() + "/" + ns->name);
  fs::permissions(p.key_dir(), fs::perms::owner_all);
  fs::permissions(p.munge_dir(), fs::perms::owner_all | fs::perms::group_exec |
                                     fs::perms::others_exec | fs::perms::group_read |
                                     fs::perms::others_read);
  const int port = slurmctld_port(mgmt_octet);
  write_file(p.conf(), slurm_conf(t, p, short_host_name(), port),
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                 fs::perms::others_read);
  // slurmd 22.05 reads cgroup.conf beside slurm.conf even with task/none; cgroup/v1 with nothing
  // constrained starts on an empty /sys/fs/cgroup.
  write_file(p.cgroup_conf(),
             "CgroupPlugin=cgroup/v1\nCgroupAutomount=no\nConstrainCores=no\n"
             "ConstrainRAMSpace=no\nConstrainDevices=no\n",
             fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                 fs::perms::others_read);
  write_munge_key(p);

  report(fmt::format("slurm: munged, slurmctld on {}:{}, {} slurmd; SLURM_CONF={}", t.mgmt_gateway,
                     port, slurm_nodes(t).size(), p.conf()));
  run_checked("starting munged",
              {"munged", "--socket=" + p.munge_socket(), "--key-file=" + p.munge_key(),
               "--pid-file=" + p.munged_pid(), "--log-file=" + p.log_dir() + "/munged.log",
               "--seed-file=" + p.munge_dir() + "/munged.seed"});
  // -c: a clean start, no state from an earlier cluster in this directory.
  run_checked("starting slurmctld", {"slurmctld", "-c", "-f", p.conf()});
  const std::string slurmd = find_in_path("slurmd");
  for (const Namespace* ns : slurm_nodes(t)) {
    if (guests && ns->role == Role::host) {
      // Its files are this machine's through a read-only 9p view under an overlay: the key,
      // slurm.conf and the binaries are there, and what the daemons write stays in the guest.
      run_checked(fmt::format("starting munged and slurmd in the guest {}", ns->name),
                  {"ssh", "-F", paths.ssh_config(), "-o", "BatchMode=yes", ns->name,
                   guest_slurmd_command(p, ns->name)});
      continue;
    }
    // `ip netns exec` mounts the namespace's own /sys, without /sys/fs/cgroup, where slurmd
    // refuses to start; an empty tmpfs there is enough for cgroup/v1 with nothing constrained.
    // The script is fixed; the paths and the node name are its arguments.
    run_checked(fmt::format("starting slurmd in {}", ns->netns),
                {"ip", "netns", "exec", ns->netns, "sh", "-c",
                 "mount -t tmpfs rocehil-cgroup /sys/fs/cgroup && exec \"$0\" -f \"$1\" -N \"$2\"",
                 slurmd, p.conf(), ns->name});
  }

  const auto deadline = Clock::now() + std::chrono::seconds(30);
  std::string last;
  while (true) {
    std::string problem;
    const auto states = slurm_node_states(paths, t.id, problem);
    std::size_t idle = 0;
    for (const auto& s : states) idle += s.ends_with(" idle") ? 1 : 0;
    if (idle == slurm_nodes(t).size()) return;
    last =
        problem.empty() ? fmt::format("{} of {} nodes idle", idle, slurm_nodes(t).size()) : problem;
    if (Clock::now() > deadline)
      throw Error(ExitCode::infrastructure,
                  fmt::format("slurm: the nodes are not idle after 30 s ({}); see the logs in {}",
                              last, p.log_dir()));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int stop_slurm(const TestbedPaths& paths, const std::string& id) {
  const SlurmPaths p = slurm_paths(paths, id);
  int stopped = 0;
  stopped += stop_pid(daemon_pid(p.slurmctld_pid(), "slurmctld")) ? 1 : 0;
  stopped += stop_pid(daemon_pid(p.munged_pid(), "munged")) ? 1 : 0;
  std::error_code ec;
  fs::remove_all(p.munge_dir(), ec);
  return stopped;
}

std::vector<std::string> slurm_node_states(const TestbedPaths& paths, const std::string& id,
                                           std::string& problem) {
  const SlurmPaths p = slurm_paths(paths, id);
  std::vector<std::string> out;
  const CommandResult r = run(sinfo_argv(p));
  if (r.exit_status != 0) {
    problem = r.err.empty() ? fmt::format("sinfo exited {}", r.exit_status)
                            : r.err.substr(0, r.err.find('\n'));
    return out;
  }
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

}  // namespace rocehil::testbed
