#include "hosts/guest_kernel.hpp"

#include <elf.h>
#include <fmt/format.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "rocehil/common/error.hpp"
#include "tools/files.hpp"
#include "tools/host_checks.hpp"
#include "tools/process.hpp"

namespace rocehil::testbed {

namespace {

namespace fs = std::filesystem;

// What /init loads to mount the machine's root file system: virtio's PCI transport, the NICs
// (stage 2 addresses them), 9p over virtio and overlayfs. Their dependencies come from modprobe.
constexpr const char* initramfs_modules[] = {"virtio_pci", "virtio_net", "9pnet_virtio", "9p",
                                             "overlay"};

std::string fetch_hint(const std::string& cache) {
  return fmt::format(
      "run 'make deps' in rocehil's source tree, or 'scripts/guest-kernel.sh {}' as root: it "
      "downloads Debian 12's linux-image package and unpacks it there (nothing is installed)",
      cache);
}

std::string find_busybox() {
  for (const char* path : {"/usr/bin/busybox", "/bin/busybox"})
    if (fs::exists(path)) return path;
  throw input_error(
      "busybox not found (the guests' initramfs runs it); install it with 'apt-get install "
      "busybox-static'");
}

// The .ko files `module` needs, itself last, as modprobe would insert them.
std::vector<std::string> module_files(const GuestKernel& kernel, const std::string& root,
                                      const char* module) {
  const std::string out =
      run_checked(fmt::format("finding the guest kernel's module {}", module),
                  {"modprobe", "-d", root, "-S", kernel.version, "--show-depends", module});
  std::vector<std::string> files;
  std::size_t at = 0;
  while (at < out.size()) {
    const std::size_t end = std::min(out.find('\n', at), out.size());
    const std::string_view line(out.data() + at, end - at);
    at = end + 1;
    // "insmod /path/x.ko [parameters]"; "builtin x" needs nothing loaded.
    if (!line.starts_with("insmod ")) continue;
    const std::string_view rest = line.substr(7);
    files.emplace_back(rest.substr(0, rest.find(' ')));
  }
  return files;
}

}  // namespace

bool elf_needs_interpreter(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header)) return false;
  if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program{};
    in.seekg(static_cast<std::streamoff>(header.e_phoff +
                                         static_cast<Elf64_Off>(i) * header.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&program), sizeof program)) return false;
    if (program.p_type == PT_INTERP) return true;
  }
  return false;
}

GuestKernel find_guest_kernel(const std::string& cache) {
  std::vector<GuestKernel> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache, ec)) {
    const std::string version = entry.path().filename().string();
    const GuestKernel k{version, entry.path().string() + "/boot/vmlinuz-" + version,
                        entry.path().string() + "/lib/modules/" + version};
    if (fs::exists(entry.path() / ".complete") && fs::exists(k.vmlinuz) &&
        fs::exists(k.modules_dir + "/modules.dep"))
      found.push_back(k);
  }
  if (found.empty())
    throw input_error(fmt::format("--vm: no guest kernel in {}; {}", cache, fetch_hint(cache)));
  // The newest: strverscmp orders 6.1.0-9 before 6.1.0-56.
  return *std::max_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return strverscmp(a.version.c_str(), b.version.c_str()) < 0;
  });
}

void build_initramfs(const GuestKernel& kernel, const TestbedPaths& paths) {
  require_tools({"modprobe", "cpio", "find"});
  const std::string busybox = find_busybox();
  if (elf_needs_interpreter(busybox))
    throw input_error(fmt::format(
        "{} is linked dynamically and cannot run in the guests' initramfs; install the static "
        "one with 'apt-get install busybox-static'",
        busybox));
  const std::string root = kernel.modules_dir.substr(0, kernel.modules_dir.rfind("/lib/modules/"));
  std::vector<std::string> modules;
  for (const char* m : initramfs_modules)
    for (auto& file : module_files(kernel, root, m))
      if (std::find(modules.begin(), modules.end(), file) == modules.end())
        modules.push_back(std::move(file));

  const std::string stage = paths.vm_dir() + "/initramfs.d";
  fs::remove_all(stage);
  fs::create_directories(stage + "/bin");
  fs::create_directories(stage + "/modules");
  fs::copy_file(busybox, stage + "/bin/busybox");
  for (std::size_t i = 0; i < modules.size(); ++i)
    fs::copy_file(modules[i], fmt::format("{}/modules/{:02}-{}", stage, i + 10,
                                          fs::path(modules[i]).filename().string()));
  write_file(stage + "/init", guest_init_script(),
             fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                 fs::perms::others_read | fs::perms::others_exec);
  // Paths travel as sh's positional parameters, never inside the script's text.
  run_checked("packing the guests' initramfs",
              {"sh", "-c", "cd \"$1\" && find . | cpio -o -H newc --quiet > \"$2\"", "sh", stage,
               paths.initramfs()});
  fs::remove_all(stage);
}

}  // namespace rocehil::testbed
