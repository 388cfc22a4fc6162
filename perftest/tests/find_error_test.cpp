// find_error on perftest's failure outputs (tests/data/SOURCES.md), and on successful runs.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "perftest_fixture.hpp"
#include "rocehil/perftest/report.hpp"

namespace pt = rocehil::perftest;

namespace {

using rocehil::perftest::testing::fixture;

}  // namespace

TEST(FindError, NoDeviceBeforeTheGenericLine) {
  EXPECT_EQ(pt::find_error(fixture("error_no_device_write_bw.txt")),
            "Did not detect devices; Unable to find the Infiniband/RoCE device");
  EXPECT_EQ(pt::find_error(fixture("error_no_device_send_lat_ud.txt")),
            "Did not detect devices; Unable to find the Infiniband/RoCE device");
}

TEST(FindError, NoDeviceReadBw) {
  EXPECT_EQ(pt::find_error(fixture("error_no_device_read_bw.txt")), "Did not detect devices");
}

TEST(FindError, ConnectFailureBeforeGluedWrappers) {
  EXPECT_EQ(pt::find_error(fixture("error_connect_pr228.txt")),
            "Couldn't connect to 192.168.125.211:18515; Unable to open file descriptor for socket "
            "connection; Unable to init the socket connection");
}

TEST(FindError, ParameterComplaint) {
  EXPECT_EQ(pt::find_error(fixture("error_ud_write_lat.txt")),
            "UD connection only possible in SEND verb");
}

TEST(FindError, DeviceNotFoundBeforeWrapper) {
  // perftest_resources.c: "IB device %s not found", then write_bw.c's wrapper.
  EXPECT_EQ(
      pt::find_error(" Unable to find the Infiniband/RoCE device\nIB device mlx5_9 not found\n"),
      "IB device mlx5_9 not found; Unable to find the Infiniband/RoCE device");
}

TEST(FindError, CompletionError) {
  // perftest_resources.h's completion check prints these two lines.
  EXPECT_EQ(pt::find_error(" Failed to complete run_iter_bw function successfully\n"
                           " Completion with error at client\n"
                           " Failed status 12: wr_id 0 syndrom 0x81\n"),
            "Completion with error at client; Failed status 12: wr_id 0 syndrom 0x81; Failed to "
            "complete run_iter_bw function successfully");
}

TEST(FindError, NothingInSuccessfulRuns) {
  for (const char* name :
       {"write_bw_gbps_cx7.txt", "read_bw_gbps_cx7.txt", "send_bw_mib_cx7.txt",
        "send_lat_rc_cx7.txt", "read_lat_rdmacm.txt", "write_lat_rdmacm.txt",
        "read_lat_duration_rdmacm.txt", "write_lat_duration_rdmacm.txt",
        "write_bw_duration_mb_rdmacm.txt", "send_bw_ud_all_mb.txt", "send_lat_ud_all.txt",
        "write_bw_bidir_q4_all_ionic.txt", "write_bw_postlist_issue273.txt"})
    EXPECT_EQ(pt::find_error(fixture(name)), "") << name;
}

TEST(FindError, WarningsAreNotErrors) {
  EXPECT_EQ(pt::find_error("Conflicting CPU frequency values detected: 1200.000000 != "
                           "3400.000000. CPU Frequency is not max.\n"
                           " WARNING: BW peak won't be measured in this run.\n"),
            "");
  EXPECT_EQ(pt::find_error(""), "");
}
