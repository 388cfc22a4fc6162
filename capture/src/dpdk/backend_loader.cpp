#include "dpdk/backend_loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "rocehil/common/error.hpp"

#ifndef ROCEHIL_DPDK_BACKEND_RELATIVE
#error "the build gives ROCEHIL_DPDK_BACKEND_RELATIVE: the backend's path from the binary's folder"
#endif

namespace rocehil::capture {
namespace dpdk {

std::vector<std::string> backend_candidates(const std::string& override_path,
                                            const std::string& executable_dir,
                                            const std::string& installed_relative) {
  if (!override_path.empty()) return {override_path};
  if (executable_dir.empty()) return {};
  // Lexically normal: /usr/lib/rocehil/..., not /usr/bin/../lib/rocehil/..., in messages.
  const std::filesystem::path dir(executable_dir);
  return {(dir / installed_relative).lexically_normal().string(),
          (dir / backend_file_name).lexically_normal().string()};
}

DpdkBackendInfo load_backend(const std::string& path, const BackendEntry*& entry) {
  entry = nullptr;
  DpdkBackendInfo info;
  info.path = path;
  // RTLD_LOCAL: DPDK's symbols stay the module's own. Never closed: sources and the EAL live as
  // long as the process.
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    const char* reason = dlerror();
    info.problem = fmt::format(
        "the DPDK backend {} does not load: {} (apt-get install rocehil-dpdk brings it and "
        "DPDK's libraries)",
        path, reason != nullptr ? reason : "unknown reason");
    return info;
  }
  const auto get_entry =
      reinterpret_cast<BackendEntryFunction>(dlsym(module, backend_entry_symbol));
  if (get_entry == nullptr) {
    info.problem =
        fmt::format("{} is not a rocehil DPDK backend: it has no {}", path, backend_entry_symbol);
    return info;
  }
  const BackendEntry* found = get_entry();
  if (found == nullptr || found->build_id == nullptr || found->open == nullptr) {
    info.problem = fmt::format("{} is not a rocehil DPDK backend: its entry is empty", path);
    return info;
  }
  if (std::strcmp(found->build_id, backend_build_id()) != 0) {
    info.problem = fmt::format(
        "the DPDK backend {} is from another build ({}; this is {}): install rocehil-dpdk of "
        "the same version as rocehil",
        path, found->build_id, backend_build_id());
    return info;
  }
  info.loaded = true;
  info.dpdk_version = found->dpdk_version != nullptr ? found->dpdk_version : "";
  entry = found;
  return info;
}

namespace {

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

struct Backend {
  DpdkBackendInfo info;
  const BackendEntry* entry = nullptr;
};

// Where this process looks for the backend: ROCEHIL_DPDK_BACKEND, else beside the executable.
std::vector<std::string> candidates_here() {
  const char* env = std::getenv("ROCEHIL_DPDK_BACKEND");
  return backend_candidates(env != nullptr ? env : "", executable_dir(),
                            ROCEHIL_DPDK_BACKEND_RELATIVE);
}

const Backend& backend() {
  static const Backend found = [] {
    Backend b;
    const std::vector<std::string> candidates = candidates_here();
    for (const std::string& path : candidates) {
      // A file that is not there is the next place to look; one that is there and fails to load
      // is the answer (its reason is what the user needs).
      if (access(path.c_str(), F_OK) != 0 && candidates.size() > 1) continue;
      b.info = load_backend(path, b.entry);
      return b;
    }
    b.info.path = fmt::format("{}", fmt::join(candidates, ", "));
    b.info.problem = fmt::format(
        "the DPDK backend is not installed: no {} at {} (apt-get install rocehil-dpdk; from "
        "source, build with libdpdk-dev installed)",
        backend_file_name, b.info.path);
    return b;
  }();
  return found;
}

}  // namespace
}  // namespace dpdk

const DpdkBackendInfo& dpdk_backend() {
  return dpdk::backend().info;
}

bool dpdk_installed() {
  for (const std::string& path : dpdk::candidates_here())
    if (access(path.c_str(), F_OK) == 0) return true;
  return false;
}

bool dpdk_available() noexcept {
  try {
    return dpdk::backend().info.loaded;
  } catch (...) {
    return false;
  }
}

std::vector<std::unique_ptr<DpdkSource>> DpdkSource::open_queues(const DpdkSourceOptions& options) {
  const dpdk::Backend& b = dpdk::backend();
  if (b.entry == nullptr)
    throw input_error("--backend dpdk: " + b.info.problem + "; or use --backend pcap");
  dpdk::BackendFailure failure;
  std::vector<std::unique_ptr<DpdkSource>> sources;
  if (!b.entry->open(options, sources, failure))
    throw Error(static_cast<ExitCode>(failure.exit_code), failure.message, failure.error_number);
  return sources;
}

std::unique_ptr<DpdkSource> DpdkSource::open(const DpdkSourceOptions& options) {
  DpdkSourceOptions one = options;
  one.queues = 1;
  return std::move(open_queues(one).front());
}

}  // namespace rocehil::capture
