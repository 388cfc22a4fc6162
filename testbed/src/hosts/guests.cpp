#include "hosts/guests.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <thread>

#include "hosts/guest_kernel.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/testbed/guest_files.hpp"
#include "tools/files.hpp"
#include "tools/host_checks.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr fs::perms readable =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;

long resident_kib(int pid) {
  const std::string status = read_file_or_empty(fmt::format("/proc/{}/status", pid));
  const auto at = status.find("VmRSS:");
  if (at == std::string::npos) return 0;
  try {
    return std::stol(status.substr(at + 6));
  } catch (const std::exception&) {
    return 0;
  }
}

// The console's last lines, for an error message: what the kernel or the scripts said last.
std::string console_tail(const std::string& text, int lines) {
  std::size_t at = text.size();
  while (at > 0 && (text[at - 1] == '\n' || text[at - 1] == '\r')) --at;
  const std::size_t end = at;
  for (int n = 0; n < lines && at > 0; ++n) {
    at = text.rfind('\n', at - 1);
    if (at == std::string::npos) {
      at = 0;
      break;
    }
  }
  std::string tail = text.substr(at, end - at);
  while (!tail.empty() && tail.front() == '\n') tail.erase(0, 1);
  for (char& c : tail)
    if (c == '\n') c = '|';
  return tail;
}

}  // namespace

std::string last_guest_line(std::string_view console) {
  constexpr std::string_view prefix = "rocehil-guest: ";
  std::string_view last;
  for (std::size_t at = console.find(prefix); at != std::string_view::npos;
       at = console.find(prefix, at + 1)) {
    const std::size_t end = console.find_first_of("\r\n", at);
    last =
        console.substr(at + prefix.size(),
                       (end == std::string_view::npos ? console.size() : end) - at - prefix.size());
  }
  return std::string(last);
}

GuestKernel prepare_guests(const TestbedOptions& o, const TestbedPaths& paths) {
  require_tools({"qemu-system-x86_64"});
  const GuestKernel kernel = find_guest_kernel(o.vm.kernel_cache);
  fs::create_directories(paths.vm_dir());
  build_initramfs(kernel, paths);
  write_file(paths.guest_stage2(), guest_stage2_script(),
             readable | fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec);
  return kernel;
}

void start_guests(const Topology& t, const TestbedOptions& o, const TestbedPaths& paths,
                  const GuestKernel& kernel, const StepReporter& report) {
  const GuestAccel accel =
      choose_accel(o.vm.accel, fs::exists("/dev/kvm"), read_file_or_empty("/proc/cpuinfo"));
  int count = 0;
  for (const auto& ns : t.namespaces)
    if (ns.role == Role::host) ++count;
  const std::string live_dir = guest_live_directory(
      o.agent, [](const std::string& path) { return fs::is_regular_file(path); });
  report(fmt::format(
      "guests: {} QEMU guests, kernel {}, {} MiB each, {}", count, kernel.version, o.vm.memory_mb,
      accel == GuestAccel::kvm ? "hardware virtualisation (kvm)" : "full emulation (tcg)"));
  for (const auto& ns : t.namespaces) {
    if (ns.role != Role::host) continue;
    run_checked(fmt::format("bridging the guest's taps in {}", ns.netns),
                {"ip", "-n", ns.netns, "-batch", "-"}, guest_tap_batch(ns, o));
    write_file(paths.guest_settings(ns), guest_settings(ns, t, o, paths, kernel, live_dir),
               readable);
    std::error_code ignored;
    fs::remove(paths.guest_console(ns), ignored);
    std::vector<std::string> argv = {"ip", "netns", "exec", ns.netns};
    for (auto& word : qemu_argv(ns, t, o, paths, kernel, accel, live_dir))
      argv.push_back(std::move(word));
    run_checked(fmt::format("starting the guest of {}", ns.netns), argv);
  }
}

GuestStatus guest_status(const Namespace& ns, const TestbedPaths& paths) {
  GuestStatus s;
  s.console = paths.guest_console(ns);
  // A pid QEMU wrote, if that process is still this guest's QEMU.
  s.pid = running_pid(paths.qemu_pid(ns), {"qemu-system", ns.netns});
  s.running = s.pid > 0;
  const std::string console = read_file_or_empty(s.console);
  const std::string line = last_guest_line(console);
  if (!s.running) {
    s.state = "stopped";
    s.detail = fmt::format("no QEMU of it runs (pid file {})", paths.qemu_pid(ns));
    if (!console.empty()) s.detail += "; console: " + console_tail(console, 3);
    return s;
  }
  s.resident_kib = resident_kib(s.pid);
  if (line.starts_with("ready")) {
    s.state = "ready";
    s.detail = line;
  } else if (line.starts_with("failed: ")) {
    s.state = "failed";
    s.detail = line.substr(8);
  } else {
    s.state = "booting";
    s.detail = console.empty() ? "nothing on its console yet" : console_tail(console, 1);
  }
  return s;
}

void wait_for_guests(const Topology& t, const TestbedPaths& paths, std::chrono::seconds limit,
                     const StepReporter& report) {
  const auto start = Clock::now();
  std::vector<const Namespace*> waiting;
  for (const auto& ns : t.namespaces)
    if (ns.role == Role::host) waiting.push_back(&ns);
  const std::size_t total = waiting.size();
  auto next_report = start + std::chrono::seconds(10);
  while (!waiting.empty()) {
    for (auto it = waiting.begin(); it != waiting.end();) {
      const Namespace& ns = **it;
      const GuestStatus s = guest_status(ns, paths);
      if (s.state == "ready") {
        it = waiting.erase(it);
        continue;
      }
      if (s.state == "failed" || s.state == "stopped")
        throw Error(ExitCode::infrastructure,
                    fmt::format("the guest of {} {}: {}; its console is {}", ns.name,
                                s.state == "failed" ? "failed" : "stopped", s.detail, s.console));
      ++it;
    }
    const auto now = Clock::now();
    if (waiting.empty()) break;
    if (now - start > limit) {
      const Namespace& ns = *waiting.front();
      const std::string console = read_file_or_empty(paths.guest_console(ns));
      throw Error(
          ExitCode::infrastructure,
          fmt::format("the guest of {} is not ready after {} s (console: {}); its console "
                      "is {}",
                      ns.name, limit.count(), console.empty() ? "empty" : console_tail(console, 3),
                      paths.guest_console(ns)));
    }
    if (now >= next_report) {
      report(fmt::format("guests: {} of {} ready after {:.0f} s", total - waiting.size(), total,
                         std::chrono::duration<double>(now - start).count()));
      next_report = now + std::chrono::seconds(10);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  report(fmt::format("guests: {} ready in {:.1f} s", total,
                     std::chrono::duration<double>(Clock::now() - start).count()));
}

}  // namespace rocehil::testbed
