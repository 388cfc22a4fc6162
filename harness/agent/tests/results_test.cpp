// The agent's buffer patterns and checksums are the same whether a QP's memory is host memory
// (data set) or device memory (data null, reached through the provider as GPU memory is). The
// device side is a stand-in: no machine here has both a GPU and an RDMA NIC, and what is tested
// is the agent's staging, not the GPU (CudaMemoryHw and VerbsHw test that where one exists).
#include "results.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "rocehil/common/error.hpp"
#include "rocehil/traffic/provider.hpp"

namespace rocehil::agent {
namespace {

// Regions without host addresses, kept in vectors the provider copies in and out of.
class DeviceMemoryProvider final : public traffic::Provider {
 public:
  std::string_view name() const override { return "device-memory stand-in"; }
  traffic::MemoryRegion register_memory(std::size_t) override {
    throw input_error("host memory is not this stand-in's");
  }
  traffic::MemoryRegion register_gpu_memory(int, std::size_t length) override {
    const std::uint32_t key = next_key_++;
    memory_[key].resize(length);
    return {.data = nullptr,
            .length = length,
            .remote_address = 0x7f0000000000,
            .lkey = key,
            .rkey = key};
  }
  void deregister_memory(const traffic::MemoryRegion& r) override { memory_.erase(r.lkey); }
  void write_region(const traffic::MemoryRegion& r, std::uint64_t offset,
                    std::span<const std::byte> bytes) override {
    std::copy(bytes.begin(), bytes.end(), memory_.at(r.lkey).begin() + offset);
  }
  void read_region(const traffic::MemoryRegion& r, std::uint64_t offset,
                   std::span<std::byte> bytes) const override {
    const auto& m = memory_.at(r.lkey);
    std::copy(m.begin() + offset, m.begin() + offset + bytes.size(), bytes.begin());
  }
  std::unique_ptr<traffic::CompletionQueue> create_cq(std::uint32_t) override { return nullptr; }
  std::unique_ptr<traffic::QueuePair> create_qp(traffic::CompletionQueue&,
                                                const traffic::QpOptions&) override {
    return nullptr;
  }
  const std::vector<std::byte>& bytes(const traffic::MemoryRegion& r) const {
    return memory_.at(r.lkey);
  }

 private:
  std::map<std::uint32_t, std::vector<std::byte>> memory_;
  std::uint32_t next_key_ = 1;
};

TEST(AgentResults, DeviceMemoryGetsTheHostPatternsAndTheSameChecksums) {
  traffic::ProviderOptions loopback;
  loopback.address = "127.0.0.1";
  auto soft = traffic::make_provider("soft", loopback);
  auto cq = soft->create_cq(64);
  std::vector<std::unique_ptr<traffic::QueuePair>> qps;
  qps.push_back(soft->create_qp(*cq, {}));
  constexpr std::uint32_t message = 4096;
  const traffic::MemoryRegion host = soft->register_memory(2 * message);
  DeviceMemoryProvider device;
  const traffic::MemoryRegion gpu = device.register_gpu_memory(0, 2 * message);

  fill_buffer(*soft, host, Role::client, 3);
  fill_buffer(device, gpu, Role::client, 3);
  EXPECT_EQ(0, std::memcmp(host.data, device.bytes(gpu).data(), 2 * message));
  EXPECT_NE(host.data[0], host.data[message]) << "the two halves differ";

  ResultsEvent from_host, from_gpu;
  add_qp_state(from_host, *soft, qps, {host}, message);
  add_qp_state(from_gpu, device, qps, {gpu}, message);
  ASSERT_EQ(from_gpu.per_qp.size(), 1u);
  ASSERT_TRUE(from_gpu.per_qp[0].source_crc32.has_value());
  EXPECT_EQ(from_gpu.per_qp[0].source_crc32, from_host.per_qp[0].source_crc32);
  EXPECT_EQ(from_gpu.per_qp[0].target_crc32, from_host.per_qp[0].target_crc32);
  EXPECT_NE(from_gpu.per_qp[0].source_crc32, from_gpu.per_qp[0].target_crc32);

  // A byte the NIC changed in device memory shows in the checksum read back.
  std::byte changed{0x5a};
  device.write_region(gpu, message + 7, {&changed, 1});
  ResultsEvent after;
  add_qp_state(after, device, qps, {gpu}, message);
  EXPECT_NE(after.per_qp[0].target_crc32, from_host.per_qp[0].target_crc32);
  EXPECT_EQ(after.per_qp[0].source_crc32, from_host.per_qp[0].source_crc32);
  soft->deregister_memory(host);
}

}  // namespace
}  // namespace rocehil::agent
