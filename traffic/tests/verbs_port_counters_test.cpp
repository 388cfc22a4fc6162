#include "verbs/port_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {
namespace {

namespace fs = std::filesystem;

// A fake /sys/class/infiniband with one device, laid out as the kernel does.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rocehil-sysfs-" + std::to_string(getpid()));
    fs::remove_all(root_);
    const fs::path port = root_ / "mlx5_0" / "ports" / "1";
    fs::create_directories(port / "counters");
    fs::create_directories(port / "hw_counters");
    write(port / "counters" / "port_xmit_data", "123456\n");
    write(port / "counters" / "port_rcv_packets", "42\n");
    write(port / "hw_counters" / "np_cnp_sent", "7\n");
    write(port / "hw_counters" / "rp_cnp_handled", "5\n");
    write(port / "hw_counters" / "np_ecn_marked_roce_packets", "9\n");
    write(port / "hw_counters" / "out_of_sequence", "0\n");
    write(port / "hw_counters" / "packet_seq_err", "1\n");
    write(port / "hw_counters" / "local_ack_timeout_err", "18446744073709551615\n");
    write(port / "hw_counters" / "lifespan", "not a number\n");  // skipped
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  fs::path root_;
};

TEST_F(FakeSysfs, ReadsBothCounterDirectoriesByName) {
  const auto counters = read_port_counters("mlx5_0", 1, root_.string());
  EXPECT_EQ(counters.at("port_xmit_data"), 123456u);
  EXPECT_EQ(counters.at("port_rcv_packets"), 42u);
  EXPECT_EQ(counters.at("np_cnp_sent"), 7u);
  EXPECT_EQ(counters.at("rp_cnp_handled"), 5u);
  EXPECT_EQ(counters.at("np_ecn_marked_roce_packets"), 9u);
  EXPECT_EQ(counters.at("out_of_sequence"), 0u);
  EXPECT_EQ(counters.at("packet_seq_err"), 1u);
  EXPECT_EQ(counters.at("local_ack_timeout_err"), 18446744073709551615u);
  EXPECT_EQ(counters.count("lifespan"), 0u);
  EXPECT_EQ(counters.size(), 8u);
}

TEST_F(FakeSysfs, UnknownDeviceOrPortIsAnErrorNamingThePath) {
  try {
    read_port_counters("mlx5_9", 1, root_.string());
    FAIL() << "no error for a missing device";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(error.what()).find("mlx5_9/ports/1"), std::string::npos) << error.what();
  }
  EXPECT_THROW(read_port_counters("mlx5_0", 2, root_.string()), Error);
}

}  // namespace
}  // namespace rocehil::traffic::verbs
