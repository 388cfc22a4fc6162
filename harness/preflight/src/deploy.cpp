#include "rocehil/preflight/deploy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "rocehil/common/error.hpp"
#include "rocehil/remote/host_ssh.hpp"

namespace rocehil::preflight {

namespace {

// Writes stdin to a temporary file next to the destination and renames it over, so an agent that
// is running keeps its old inode and a half-copied binary is never on the path. "$1" is data.
constexpr const char* copy_script =
    "set -e; dst=$1; tmp=\"$dst.rocehil-deploy.$$\"; mkdir -p -- \"$(dirname -- \"$dst\")\"; "
    "cat > \"$tmp\"; chmod 755 \"$tmp\"; mv -f -- \"$tmp\" \"$dst\"";

// POSIX sh; takes no arguments, so nothing from the inventory reaches it. Its lines:
//   failed REASON          it stopped before apt-get (REASON: no-apt, not-root, or words)
//   before|after NAME VERSION STATUS   dpkg-query's view of rocehil's packages
//   apt SUMMARY            apt-get's "N upgraded, N newly installed, ..." line
//   error LINE             apt-get's last lines when it failed, then "exit N"
// --allow-downgrades: bisecting a regression installs older versions on purpose. The lock
// timeout: hosts sharing one dpkg database (the testbed) install one after the other.
constexpr std::string_view install_script = R"SH(exec 2>&1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rocehil-deploy.XXXXXX") || { echo "failed cannot make a temporary folder"; exit 0; }
trap 'rm -rf -- "$tmp"' EXIT
chmod 755 "$tmp"
if ! tar -xf - -C "$tmp" >"$tmp/tar.out" 2>&1; then printf 'failed unpacking the packages: %s\n' "$(head -n 1 "$tmp/tar.out")"; exit 0; fi
command -v apt-get >/dev/null 2>&1 || { echo "failed no-apt"; exit 0; }
s=""
if [ "$(id -u)" != 0 ]; then
  if sudo -n true >/dev/null 2>&1; then s="sudo -n"; else echo "failed not-root"; exit 0; fi
fi
dpkg-query -W -f='before ${Package} ${Version} ${db:Status-Abbrev}\n' rocehil rocehil-dpdk 2>/dev/null
$s env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=300 --allow-downgrades "$tmp"/*.deb >"$tmp/apt.out" 2>&1
rc=$?
grep -E '^[0-9]+ upgraded' "$tmp/apt.out" | head -n 1 | sed 's/^/apt /'
if [ "$rc" != 0 ]; then grep -v '^\s*$' "$tmp/apt.out" | tail -n 4 | cut -c1-300 | sed 's/^/error /'; echo "exit $rc"; fi
dpkg-query -W -f='after ${Package} ${Version} ${db:Status-Abbrev}\n' rocehil rocehil-dpdk 2>/dev/null
exit 0)SH";

constexpr std::string_view packaged_agent = "/usr/bin/rocehil";

std::string listed(const std::map<std::string, std::string>& installed) {
  if (installed.empty()) return "none";
  std::vector<std::string> words;
  for (const auto& [name, version] : installed) words.push_back(name + " " + version);
  return fmt::format("{}", fmt::join(words, ", "));
}

std::string listed(const std::vector<DebPackage>& packages) {
  std::vector<std::string> words;
  for (const auto& p : packages) words.push_back(p.name + " " + p.version);
  return fmt::format("{}", fmt::join(words, ", "));
}

std::string field_of(const std::string& text, std::string_view name) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line(text.data() + start, nl - start);
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ':') {
      std::string_view value = line.substr(name.size() + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      return std::string(value);
    }
    start = nl + 1;
  }
  return {};
}

// apt-get's summary says it installed, upgraded and downgraded nothing ("0 upgraded, 0 newly
// installed, 0 to remove and 122 not upgraded."): the packages were already at their versions.
bool apt_changed_nothing(std::string_view summary) {
  if (summary.empty()) return false;
  for (const std::string_view what : {" upgraded", " newly installed", " downgraded"}) {
    const auto at = summary.find(what);
    if (at == std::string_view::npos) continue;
    auto start = at;
    while (start > 0 && summary[start - 1] >= '0' && summary[start - 1] <= '9') --start;
    if (summary.substr(start, at - start) != "0") return false;
  }
  return true;
}

}  // namespace

DeployMode parse_deploy_mode(std::string_view text) {
  if (text == "package") return DeployMode::package;
  if (text == "binary") return DeployMode::binary;
  throw input_error(fmt::format(
      "--deploy={}: the ways are package (apt-get install the .deb) and binary (copy this "
      "executable)",
      text));
}

std::vector<DebPackage> read_deb_packages(const std::vector<std::string>& files,
                                          std::string_view version) {
  if (files.empty())
    throw input_error(
        "--deploy installs rocehil's Debian package: give it with --package "
        "rocehil_VERSION_amd64.deb ('make package' builds it; add --package "
        "rocehil-dpdk_VERSION_amd64.deb for DPDK capture), or use --deploy=binary to copy this "
        "executable");
  std::vector<DebPackage> packages;
  bool main_package = false;
  for (const std::string& file : files) {
    remote::RunOptions run;
    run.timeout = std::chrono::seconds(30);
    const remote::CommandResult r = remote::run_command({"dpkg-deb", "-f", file}, run);
    if (!r.succeeded())
      throw input_error(fmt::format("--package {}: not a Debian package ({})", file,
                                    r.reason().empty() ? "dpkg-deb failed" : r.reason()));
    DebPackage p{
        .path = file, .name = field_of(r.out, "Package"), .version = field_of(r.out, "Version")};
    if (p.name != "rocehil" && p.name != "rocehil-dpdk")
      throw input_error(fmt::format(
          "--package {}: this is package '{}'; --deploy installs rocehil and rocehil-dpdk", file,
          p.name));
    if (p.version != version)
      throw input_error(fmt::format(
          "--package {}: this is {} {}, and this controller is rocehil {}: agents must be the "
          "controller's version (build the package from this tree with 'make package')",
          file, p.name, p.version, version));
    for (const auto& q : packages)
      if (q.name == p.name)
        throw input_error(
            fmt::format("--package {}: {} is already given as {}", file, p.name, q.path));
    main_package = main_package || p.name == "rocehil";
    packages.push_back(std::move(p));
  }
  if (!main_package)
    throw input_error(
        fmt::format("--package: none of {} is the rocehil package; rocehil-dpdk needs it beside it",
                    fmt::join(files, ", ")));
  return packages;
}

bool needs_deploy(const HostFacts& facts, DeployMode mode, std::string_view agent_version,
                  const std::vector<DebPackage>& packages) {
  if (mode == DeployMode::none) return false;
  if (facts.agent_version != agent_version) return true;
  if (mode == DeployMode::package)
    for (const auto& p : packages) {
      const auto it = facts.packages.find(p.name);
      if (it == facts.packages.end() || it->second != p.version) return true;
    }
  return false;
}

CheckItem nothing_to_deploy(DeployMode mode, std::string_view agent_version,
                            const std::vector<DebPackage>& packages) {
  CheckItem item{.name = "deploy", .status = CheckStatus::info, .detail = {}};
  item.detail = mode == DeployMode::package
                    ? fmt::format("{} installed already; nothing to do", listed(packages))
                    : fmt::format("the agent is {} already; nothing copied", agent_version);
  return item;
}

std::string_view package_install_script() {
  return install_script;
}

CheckItem package_install_item(const inventory::Host& host, const remote::CommandResult& run,
                               const std::vector<DebPackage>& packages) {
  CheckItem item{.name = "deploy", .status = CheckStatus::fail, .detail = {}};
  if (!run.succeeded()) {
    item.detail =
        run.timed_out
            ? fmt::format("installing {} did not finish in {:.0f} s", listed(packages), run.seconds)
            : fmt::format("installing {} failed: {}", listed(packages), run.reason());
    return item;
  }
  std::map<std::string, std::string> before, after;
  std::string failed, apt_summary;
  std::vector<std::string> errors;
  int exit_code = 0;
  std::size_t start = 0;
  const std::string& out = run.out;
  while (start < out.size()) {
    std::size_t nl = out.find('\n', start);
    if (nl == std::string::npos) nl = out.size();
    const std::string line = out.substr(start, nl - start);
    start = nl + 1;
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "failed") {
      failed = rest;
    } else if (key == "apt") {
      apt_summary = rest;
    } else if (key == "error") {
      errors.push_back(rest);
    } else if (key == "exit") {
      exit_code = std::atoi(rest.c_str());
    } else if (key == "before" || key == "after") {
      // "NAME VERSION STATUS": installed when the status is "ii".
      const auto a = rest.find(' ');
      const auto b = a == std::string::npos ? a : rest.find(' ', a + 1);
      if (b != std::string::npos && rest.compare(b + 1, 2, "ii") == 0)
        (key == "before" ? before : after)[rest.substr(0, a)] = rest.substr(a + 1, b - a - 1);
    }
  }
  if (failed == "no-apt") {
    item.detail = "apt-get is not on this host; use --deploy=binary to copy the binary instead";
  } else if (failed == "not-root") {
    item.detail = fmt::format(
        "installing a package needs root, and '{}' is not root and has no passwordless sudo; "
        "log in as root (user in the inventory) or allow sudo for apt-get",
        host.ssh.user.empty() ? "the ssh user" : host.ssh.user);
  } else if (!failed.empty()) {
    item.detail = failed;
  } else if (exit_code != 0) {
    item.detail = fmt::format("apt-get install {} failed (exit {}): {}", listed(packages),
                              exit_code, fmt::join(errors, "; "));
  } else {
    for (const auto& p : packages) {
      const auto it = after.find(p.name);
      if (it == after.end() || it->second != p.version) {
        item.detail = fmt::format("apt-get succeeded but dpkg lists {} as {}", p.name,
                                  it == after.end() ? "not installed" : it->second);
        return item;
      }
    }
    item.status = CheckStatus::info;
    item.detail = apt_changed_nothing(apt_summary)
                      ? fmt::format(
                            "{} there when apt-get ran, in {:.1f} s: another host sharing this "
                            "dpkg database installed it (before: {}; apt: {})",
                            listed(packages), run.seconds, listed(before), apt_summary)
                      : fmt::format("installed {} with apt-get in {:.1f} s (before: {}; apt: {})",
                                    listed(packages), run.seconds, listed(before),
                                    apt_summary.empty() ? "no summary" : apt_summary);
    if (host.agent != "rocehil" && host.agent != packaged_agent) {
      item.status = CheckStatus::warn;
      item.detail +=
          fmt::format("; the package installs {}, but this host's agent is {}: set 'agent: {}'",
                      packaged_agent, host.agent, packaged_agent);
    }
  }
  return item;
}

CheckItem copy_binary(const inventory::Host& host, const std::string& local_binary,
                      std::string_view agent_version, std::chrono::milliseconds timeout) {
  if (host.agent.find('/') == std::string::npos)
    return {.name = "deploy",
            .status = CheckStatus::fail,
            .detail = fmt::format("the agent is '{}', a name looked up on the host's PATH; set "
                                  "'agent' to an absolute path to deploy there",
                                  host.agent)};
  const remote::AgentCommand command =
      remote::host_command(host, {"sh", "-c", copy_script, "rocehil-deploy", host.agent});
  remote::RunOptions run_options;
  run_options.timeout = timeout;
  run_options.stdin_file = local_binary;
  const remote::CommandResult r = remote::run_command(command.argv, run_options);
  if (!r.succeeded())
    return {
        .name = "deploy",
        .status = CheckStatus::fail,
        .detail = fmt::format("copying {} to {} failed: {}", local_binary, host.agent, r.reason())};
  return {
      .name = "deploy",
      .status = CheckStatus::info,
      .detail = fmt::format("copied {} to {} in {:.1f} s", agent_version, host.agent, r.seconds)};
}

}  // namespace rocehil::preflight
