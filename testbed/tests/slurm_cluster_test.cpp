#include "rocehil/testbed/slurm_cluster.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace rocehil::testbed {
namespace {

namespace fs = std::filesystem;

// What bash makes of `command` when every program it names is a function printing its words, one
// per line: the words the guest's programs would get.
std::string words_the_shell_passes(const std::string& command) {
  const fs::path file = fs::temp_directory_path() / fmt::format("slurmd-command-{}.sh", getpid());
  std::ofstream(file) << "for p in mkdir mountpoint mount munged slurmd; do\n"
                      << "  eval \"$p() { echo \\\"[$p]\\\"; printf '%s\\n' \\\"\\$@\\\"; }\"\n"
                      << "done\n"
                      << "mountpoint() { echo '[mountpoint]'; printf '%s\\n' \"$@\"; return 1; }\n"
                      << command << "\n";
  std::string out;
  if (FILE* pipe = ::popen(fmt::format("bash {}", file.string()).c_str(), "r")) {
    std::array<char, 256> buffer{};
    while (std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    ::pclose(pipe);
  }
  fs::remove(file);
  return out;
}

// A guest's node: its own munged on the testbed's key (the machine's socket does not cross 9p),
// then slurmd under the node's name; every path a single word, even one with a quote in it.
TEST(SlurmCluster, AGuestStartsItsOwnMungedThenItsSlurmdWithTheTestbedsFiles) {
  const SlurmPaths p{"/tmp/it's here/slurm", "t1"};
  const std::string got = words_the_shell_passes(guest_slurmd_command(p, "h2"));
  EXPECT_NE(got.find("[mkdir]\n-p\n/run/rocehil-t1-munge\n/tmp/it's here/slurm/spool/h2\n"
                     "/tmp/it's here/slurm/log\n"),
            std::string::npos)
      << got;
  // The cgroup mount only where none is: mountpoint said no here, so mount ran.
  EXPECT_NE(got.find("[mount]\n-t\ntmpfs\nrocehil-cgroup\n/sys/fs/cgroup\n"), std::string::npos)
      << got;
  EXPECT_NE(got.find("[munged]\n--socket=/run/rocehil-t1-munge/munge.socket\n"
                     "--key-file=/tmp/it's here/slurm/key/munge.key\n"),
            std::string::npos)
      << got;
  EXPECT_NE(got.find("--log-file=/tmp/it's here/slurm/log/munged-h2.log\n"), std::string::npos);
  EXPECT_TRUE(got.ends_with("[slurmd]\n-f\n/tmp/it's here/slurm/slurm.conf\n-N\nh2\n")) << got;
}

}  // namespace
}  // namespace rocehil::testbed
