#include "rocehil/preflight/inventory_check.hpp"

#include <fmt/format.h>

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <mutex>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/fan_out.hpp"
#include "rocehil/remote/host_ssh.hpp"
#include "rocehil/remote/run_command.hpp"

namespace rocehil::preflight {

namespace {

std::vector<std::string> probed_netdevs(const inventory::Host& host) {
  std::vector<std::string> netdevs;
  for (const auto& nic : host.nics)
    if (!nic.netdev.empty()) netdevs.push_back(nic.netdev);
  return netdevs;
}

struct Probe {
  remote::CommandResult run;
  bool answered = false;
};

Probe probe(const inventory::Host& host, const CheckOptions& o) {
  const remote::AgentCommand command =
      remote::host_command(host, probe_command(host.agent, probed_netdevs(host)), o.multiplex);
  remote::RunOptions run_options;
  run_options.timeout = o.timeout;
  Probe p;
  p.run = remote::run_command(command.argv, run_options);
  // ssh exits 255 for its own failures; the probe script itself always exits 0.
  p.answered = p.run.started && !p.run.timed_out && p.run.exit_code != 255 &&
               p.run.out.find("@@ host") != std::string::npos;
  return p;
}

// The .deb files as one tar, made once and sent to every host that needs them; removed when the
// check is over.
class PackageBundle {
 public:
  explicit PackageBundle(const std::vector<DebPackage>& packages) {
    if (packages.empty()) return;
    char pattern[] = "/tmp/rocehil-bundle-XXXXXX";
    if (mkdtemp(pattern) == nullptr)
      throw system_error("cannot make a folder for the packages", errno);
    dir_ = pattern;
    path_ = dir_ + "/packages.tar";
    std::vector<std::string> argv = {"tar", "-cf", path_};
    for (const auto& p : packages) {
      // Absolute folders (tar takes a relative -C from the one before), and "./NAME" so a file
      // name is never read as an option.
      const std::filesystem::path file = std::filesystem::absolute(p.path);
      argv.insert(argv.end(), {"-C", file.parent_path().string(), "./" + file.filename().string()});
    }
    remote::RunOptions run;
    run.timeout = std::chrono::seconds(120);
    const remote::CommandResult r = remote::run_command(argv, run);
    if (!r.succeeded())
      throw Error(ExitCode::infrastructure,
                  fmt::format("cannot bundle the packages with tar: {}", r.reason()));
  }
  ~PackageBundle() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PackageBundle(const PackageBundle&) = delete;
  PackageBundle& operator=(const PackageBundle&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

CheckItem deploy(const inventory::Host& host, const CheckOptions& o, const std::string& bundle) {
  if (o.deploy == DeployMode::binary)
    return copy_binary(host, o.local_binary, o.controller_version, o.timeout);
  const remote::AgentCommand command =
      remote::host_command(host, {"sh", "-c", std::string(package_install_script())});
  remote::RunOptions run_options;
  // apt-get may wait for another host's install on a shared dpkg (up to its lock timeout, 300 s).
  run_options.timeout = o.timeout + std::chrono::seconds(360);
  run_options.stdin_file = bundle;
  return package_install_item(host, remote::run_command(command.argv, run_options), o.packages);
}

HostCheck check_host(const inventory::Host& host, const CheckOptions& o,
                     const std::string& bundle) {
  HostCheck check;
  check.host = host.name;
  check.address = host.address;
  Probe p = probe(host, o);
  std::vector<CheckItem> deployed;
  if (p.answered && o.deploy != DeployMode::none) {
    const HostFacts first = parse_probe_output(p.run.out);
    if (needs_deploy(first, o.deploy, o.controller_version, o.packages)) {
      deployed.push_back(deploy(host, o, bundle));
      if (deployed.back().status != CheckStatus::fail) p = probe(host, o);
    } else {
      deployed.push_back(nothing_to_deploy(o.deploy, o.controller_version, o.packages));
    }
  }
  check.ssh_ms = p.run.seconds * 1000;
  if (!p.answered) {
    check.verdict = HostVerdict::unreachable;
    check.unreachable = p.run.succeeded() || p.run.exit_code == 0
                            ? "the probe printed nothing; is the login shell a POSIX sh?"
                            : p.run.ssh_reason();
    if (p.run.timed_out)
      check.unreachable = fmt::format("ssh: no answer within {} s",
                                      static_cast<double>(o.timeout.count()) / 1000.0);
    return check;
  }
  HostFacts facts = parse_probe_output(p.run.out);
  check.items.push_back({.name = "ssh",
                         .status = CheckStatus::ok,
                         .detail = fmt::format("{:.1f} ms to connect and probe", check.ssh_ms)});
  check.items.insert(check.items.end(), deployed.begin(), deployed.end());
  std::vector<CheckItem> evaluated = evaluate_host(host, facts, o.controller_version);
  check.items.insert(check.items.end(), evaluated.begin(), evaluated.end());
  check.verdict = verdict_of(host, facts, check.items);
  check.facts = std::move(facts);
  return check;
}

}  // namespace

CheckReport check_hosts(const inventory::Inventory& inventory,
                        const std::vector<const inventory::Host*>& hosts,
                        const std::string& selection, const CheckOptions& options) {
  CheckReport report;
  report.inventory_file = inventory.file;
  report.inventory_name = inventory.name;
  report.selection = selection;
  report.controller_version = options.controller_version;
  report.hosts.resize(hosts.size());
  const PackageBundle bundle(options.deploy == DeployMode::package ? options.packages
                                                                   : std::vector<DebPackage>{});
  std::mutex progress_mutex;
  std::uint64_t done = 0;
  remote::fan_out(hosts.size(), options.fanout, [&](std::size_t i) {
    try {
      report.hosts[i] = check_host(*hosts[i], options, bundle.path());
    } catch (const std::exception& e) {
      HostCheck& failed = report.hosts[i];
      failed.host = hosts[i]->name;
      failed.address = hosts[i]->address;
      failed.verdict = HostVerdict::unreachable;
      failed.unreachable = e.what();
    }
    const std::lock_guard lock(progress_mutex);
    ++done;
    if (options.on_progress) options.on_progress(done, hosts.size());
  });
  return report;
}

int check_exit_code(const CheckReport& report) {
  int code = 0;
  for (const auto& h : report.hosts) {
    if (h.verdict == HostVerdict::unreachable) return static_cast<int>(ExitCode::infrastructure);
    if (h.verdict == HostVerdict::failed) code = static_cast<int>(ExitCode::threshold_failed);
  }
  return code;
}

}  // namespace rocehil::preflight
