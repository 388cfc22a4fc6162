#pragma once

#include <string>
#include <vector>

#include "rocehil/testbed/ssh_files.hpp"
#include "rocehil/testbed/testbed.hpp"
#include "rocehil/testbed/topology.hpp"

namespace rocehil::testbed {

// `testbed up --slurm`: a real Slurm cluster over the namespaces, from Debian's slurmctld, slurmd
// and munge. Everything lives in DIR/slurm/ with its own munge key and socket, so it shares
// nothing with a Slurm or munge the machine may run: slurmctld on the management bridge at a
// port of its own (two testbeds' controllers never collide), and in every namespace that runs
// sshd a slurmd named as the host, its spool directory its own. No cgroups: processes are
// tracked by their parent (proctrack/linuxproc), tasks are not bound (task/none).
// Clients reach it with SLURM_CONF=DIR/slurm/slurm.conf: `salloc -N 5 rocehil run ...`.
struct SlurmPaths {
  std::string dir;  // DIR/slurm
  std::string id;   // the testbed's
  std::string conf() const { return dir + "/slurm.conf"; }
  std::string cgroup_conf() const { return dir + "/cgroup.conf"; }
  std::string key_dir() const { return dir + "/key"; }  // 0700: munged refuses a readable key
  std::string munge_key() const { return key_dir() + "/munge.key"; }
  // The socket's: munged wants every directory above it searchable by all, which a private
  // --dir (mkdtemp's 0700) is not.
  std::string munge_dir() const { return "/run/rocehil-" + id + "-munge"; }
  std::string munge_socket() const { return munge_dir() + "/munge.socket"; }
  std::string munged_pid() const { return munge_dir() + "/munged.pid"; }
  std::string state_dir() const { return dir + "/state"; }
  std::string spool_dir() const { return dir + "/spool"; }
  std::string log_dir() const { return dir + "/log"; }
  std::string slurmctld_pid() const { return dir + "/slurmctld.pid"; }
};
SlurmPaths slurm_paths(const TestbedPaths& paths, const std::string& id);

// slurmctld's port: 17000 + the management octet, unique among the testbeds up at once.
int slurmctld_port(int mgmt_octet);

// The nodes: every namespace that runs sshd (hosts and the capture namespace; not switches).
std::vector<const Namespace*> slurm_nodes(const Topology& t);

// slurm.conf for the testbed; `controller` is this machine's short host name (slurmctld runs
// only where SlurmctldHost names it).
std::string slurm_conf(const Topology& t, const SlurmPaths& paths, const std::string& controller,
                       int port);

// What a QEMU guest (`up --vm`) runs, over the testbed's ssh, to be a node: a munged of its own
// with the testbed's key (this machine's munge socket does not cross 9p), then its slurmd named
// `node`. Both daemonize, so the command returns once they started. The words are quoted.
std::string guest_slurmd_command(const SlurmPaths& paths, const std::string& node);

// Starts munged, slurmctld and the slurmds (in the guests when `guests`), and waits until every
// node is idle.
void start_slurm(const Topology& t, const TestbedPaths& paths, int mgmt_octet, bool guests,
                 const StepReporter& report);

// Stops slurmctld and munged of a testbed (the slurmds go with their namespaces); returns how
// many processes it stopped.
int stop_slurm(const TestbedPaths& paths, const std::string& id);

// `sinfo`'s view: a line per node, "h1 idle"; or why it could not be asked.
std::vector<std::string> slurm_node_states(const TestbedPaths& paths, const std::string& id,
                                           std::string& problem);

}  // namespace rocehil::testbed
