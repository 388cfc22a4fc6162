#pragma once

// Test helper: a directory laid out like a ConnectX host's /sys: eth1 with MLNX_OFED's
// ecn/roce_rp and ecn/roce_np files (values as in the preflight probe's ConnectX sample), eth2
// with the upstream driver's debugfs cc_params instead, eth3 with neither.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rocehil::settings::testing {

class FakeHost {
 public:
  FakeHost() {
    char pattern[] = "/tmp/rocehil-fake-host.XXXXXX";
    root_ = ::mkdtemp(pattern);
    const std::string eth1 = root_ + "/sys/class/net/eth1";
    for (const auto& [file, value] : {std::pair{"roce_rp/rpg_time_reset", "300"},
                                      {"roce_rp/rpg_gd", "11"},
                                      {"roce_rp/rpg_ai_rate", "5"},
                                      {"roce_rp/dce_tcp_g", "1019"},
                                      {"roce_np/min_time_between_cnps", "4"},
                                      {"roce_np/cnp_dscp", "48"}})
      put(eth1 + "/ecn/" + file, value);
    for (int p = 0; p < 8; ++p) {
      put(eth1 + "/ecn/roce_rp/enable/" + std::to_string(p), p == 3 ? "1" : "0");
      put(eth1 + "/ecn/roce_np/enable/" + std::to_string(p), p == 3 ? "1" : "0");
    }
    put(eth1 + "/mtu", "9000");
    const std::string eth2 = root_ + "/sys/class/net/eth2";
    std::filesystem::create_directories(eth2);
    std::filesystem::create_directories(root_ + "/sys/devices/pci0000:00/0000:3b:00.1");
    std::filesystem::create_directory_symlink("../../../devices/pci0000:00/0000:3b:00.1",
                                              eth2 + "/device");
    const std::string cc = root_ + "/sys/kernel/debug/mlx5/0000:3b:00.1/cc_params";
    put(cc + "/rp_time_reset", "300");
    put(cc + "/np_cnp_dscp", "48");
    put(eth2 + "/mtu", "1500");
    std::filesystem::create_directories(root_ + "/sys/class/net/eth3");
    put(root_ + "/sys/class/net/eth3/mtu", "1500");
  }
  ~FakeHost() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const std::string& root() const { return root_; }
  std::string file(const std::string& relative) const { return root_ + "/" + relative; }

  // A file's first line, as the driver would show it.
  std::string value(const std::string& relative) const {
    std::ifstream in(file(relative));
    std::string line;
    std::getline(in, line);
    return line;
  }

  static void put(const std::string& path, const std::string& value) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << value << "\n";
  }

 private:
  std::string root_;
};

}  // namespace rocehil::settings::testing
