#include "dpdk/backend_loader.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rocehil::capture::dpdk {
namespace {

TEST(DpdkBackendCandidates, TheEnvironmentAloneWhenSet) {
  EXPECT_EQ(backend_candidates("/opt/x/librocehil-dpdk.so", "/usr/bin", "../lib/rocehil/l.so"),
            std::vector<std::string>{"/opt/x/librocehil-dpdk.so"});
}

TEST(DpdkBackendCandidates, TheInstalledLayoutFirstThenBesideTheBinary) {
  EXPECT_EQ(backend_candidates("", "/usr/bin", "../lib/rocehil/librocehil-dpdk.so"),
            (std::vector<std::string>{"/usr/lib/rocehil/librocehil-dpdk.so",
                                      "/usr/bin/librocehil-dpdk.so"}));
  EXPECT_TRUE(backend_candidates("", "", "../lib/rocehil/librocehil-dpdk.so").empty());
}

TEST(DpdkBackendLoad, AMissingFileSaysWhereAndWhatToInstall) {
  const BackendEntry* entry = nullptr;
  const DpdkBackendInfo info = load_backend("/nonexistent/librocehil-dpdk.so", entry);
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(entry, nullptr);
  EXPECT_NE(info.problem.find("/nonexistent/librocehil-dpdk.so"), std::string::npos)
      << info.problem;
  EXPECT_NE(info.problem.find("apt-get install rocehil-dpdk"), std::string::npos) << info.problem;
}

TEST(DpdkBackendLoad, ALibraryWithoutTheEntryIsNotABackend) {
  const BackendEntry* entry = nullptr;
  const DpdkBackendInfo info = load_backend("libc.so.6", entry);
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(entry, nullptr);
  EXPECT_NE(info.problem.find("not a rocehil DPDK backend"), std::string::npos) << info.problem;
  EXPECT_NE(info.problem.find(backend_entry_symbol), std::string::npos) << info.problem;
}

TEST(DpdkBackendLoad, ABackendFromAnotherBuildIsRefusedWithBothBuilds) {
  const BackendEntry* entry = nullptr;
  const DpdkBackendInfo info = load_backend(ROCEHIL_TEST_OTHER_BUILD_BACKEND, entry);
  EXPECT_FALSE(info.loaded);
  EXPECT_EQ(entry, nullptr);
  EXPECT_NE(info.problem.find("rocehil 0.0.1, another compiler"), std::string::npos)
      << info.problem;
  EXPECT_NE(info.problem.find(backend_build_id()), std::string::npos) << info.problem;
  EXPECT_NE(info.problem.find("same version"), std::string::npos) << info.problem;
}

#ifdef ROCEHIL_TEST_DPDK_BACKEND
TEST(DpdkBackendLoad, TheBuiltBackendLoadsAndNamesItsDpdk) {
  const BackendEntry* entry = nullptr;
  const DpdkBackendInfo info = load_backend(ROCEHIL_TEST_DPDK_BACKEND, entry);
  EXPECT_TRUE(info.loaded) << info.problem;
  ASSERT_NE(entry, nullptr);
  EXPECT_TRUE(info.problem.empty()) << info.problem;
  EXPECT_TRUE(info.dpdk_version.starts_with("DPDK ")) << info.dpdk_version;
  EXPECT_EQ(info.path, ROCEHIL_TEST_DPDK_BACKEND);
}
#endif

}  // namespace
}  // namespace rocehil::capture::dpdk
