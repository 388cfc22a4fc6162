// The verbs provider where no RDMA device or GPU is needed: what a host without them gets. The
// tests that need a device are in verbs_provider_hw_test.cpp (ctest label hw).
#include "verbs/verbs_provider.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {
namespace {

bool has_rdma_device() {
  return !DeviceList::get().devices().empty();
}

TEST(VerbsProvider, WithoutADeviceSaysSoAsAnInfrastructureError) {
  if (has_rdma_device()) GTEST_SKIP() << "this host has an RDMA device";
  try {
    make_verbs_provider(ProviderOptions{});
    FAIL() << "make_verbs_provider succeeded without a device";
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::infrastructure);
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("no RDMA device found", 0), 0u) << message;
    EXPECT_NE(message.find("soft"), std::string::npos) << message;  // says what to do instead
  }
}

TEST(VerbsProvider, LooksForDevicesOnlyWithRegistrationsProtectedFromFork) {
  // ibv_fork_init must run before the first registration; the provider calls it before it
  // lists devices, unless the kernel copies DMA pages at fork by itself (>= 5.13).
  (void)DeviceList::get();
  EXPECT_NE(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
}

TEST(VerbsProvider, ListsNoDevicesWithoutADevice) {
  if (has_rdma_device()) GTEST_SKIP() << "this host has an RDMA device";
  EXPECT_TRUE(list_devices().empty());
}

TEST(VerbsProvider, NoDeviceMessageNamesTheKernelReason) {
  const std::string enosys = no_device_message(ENOSYS);
  EXPECT_NE(enosys.find("ibv_get_device_list found 0 devices"), std::string::npos) << enosys;
  EXPECT_NE(enosys.find("kernel has no RDMA support"), std::string::npos) << enosys;
  EXPECT_EQ(no_device_message(0).find("("), std::string::npos);
}

TEST(VerbsCudaMemory, WithoutLibcudaAllocationSaysWhatToInstall) {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) GTEST_SKIP() << "the CUDA driver loads on this host";
  try {
    CudaMemory::allocate(0, 4096);
    FAIL() << "allocated GPU memory although: " << reason;
  } catch (const Error& error) {
    EXPECT_EQ(error.exit_code(), ExitCode::infrastructure);
    EXPECT_EQ(std::string(error.what()), reason);
    EXPECT_NE(reason.find("libcuda"), std::string::npos) << reason;
  }
}

TEST(VerbsHandles, MovedFromHandlesOwnNothing) {
  HostBuffer buffer = HostBuffer::allocate(100);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(buffer.length() % static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) %
                static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)),
            0u);
  EXPECT_EQ(buffer.data()[99], std::byte{0});
  HostBuffer moved = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_NE(moved.data(), nullptr);

  ProtectionDomain empty;
  ProtectionDomain also_empty = std::move(empty);
  EXPECT_FALSE(also_empty);
  also_empty.reset();  // destroying nothing is fine, twice
}

}  // namespace
}  // namespace rocehil::traffic::verbs
