#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "device_events.hpp"
#include "rocehil/traffic/provider.hpp"
#include "verbs/async_events.hpp"
#include "verbs/cuda_memory.hpp"
#include "verbs/device.hpp"
#include "verbs/handles.hpp"

// The `verbs` provider: libibverbs on a real RNIC (RoCEv2). One device port, one protection
// domain; RC and UD queue pairs; host memory, and GPU memory through the CUDA driver loaded at run
// time. list_devices() (device.hpp) comes with it; the port counters are read by
// rocehil/traffic/nic_counters.hpp, which needs no libibverbs.
namespace rocehil::traffic::verbs {

class VerbsProvider final : public Provider {
 public:
  // Opens the device and port, checks the port is ACTIVE and picks the source GID (see
  // open_device). Throws rocehil::Error.
  explicit VerbsProvider(const ProviderOptions& options);
  ~VerbsProvider() override;
  VerbsProvider(const VerbsProvider&) = delete;
  VerbsProvider& operator=(const VerbsProvider&) = delete;

  std::string_view name() const override { return "verbs"; }
  // Page-aligned, zeroed host memory registered for local write and remote read/write.
  MemoryRegion register_memory(std::size_t length) override;
  void deregister_memory(const MemoryRegion& region) override;
  std::unique_ptr<CompletionQueue> create_cq(std::uint32_t depth) override;
  // `cq` must come from this provider's create_cq.
  std::unique_ptr<QueuePair> create_qp(CompletionQueue& cq, const QpOptions& options) override;
  std::string udp_sport_unsupported() const override;

  // `length` bytes of GPU `gpu`'s memory, registered as a dma-buf (ibv_reg_dmabuf_mr) when the
  // CUDA driver can export one, else by device pointer (ibv_reg_mr, which works with
  // nvidia-peermem loaded). The region has data == nullptr; its remote_address is the device
  // pointer. Deregister it with deregister_memory. Throws rocehil::Error naming both failures
  // when neither registration works.
  MemoryRegion register_gpu_memory(int gpu, std::size_t length) override;
  // GPU regions through cuMemcpy; host regions as every provider does.
  void write_region(const MemoryRegion& region, std::uint64_t offset,
                    std::span<const std::byte> bytes) override;
  void read_region(const MemoryRegion& region, std::uint64_t offset,
                   std::span<std::byte> bytes) const override;
  // The allocation behind a region from register_gpu_memory (to fill or check it); null for host
  // regions and unknown ones.
  const CudaMemory* gpu_memory(const MemoryRegion& region) const;

  const DeviceContext& device() const noexcept { return *device_; }
  // What the device raised since the last call (ibv_get_async_event, read since construction).
  std::vector<DeviceEvent> take_events() override { return events_.take(); }

 private:
  struct Registration {
    // Declared in creation order: the MR is deregistered before its memory is freed.
    HostBuffer host;
    std::unique_ptr<CudaMemory> gpu;
    MemoryRegistration mr;
  };

  MemoryRegion remember(Registration registration, std::byte* data, std::uint64_t length,
                        std::uint64_t io_address);

  std::shared_ptr<DeviceContext> device_;
  DeviceEventLog events_;
  std::unique_ptr<AsyncEventReader> async_events_;       // gone before the device and the log
  std::map<std::uint32_t, Registration> registrations_;  // by lkey
  std::mt19937 psn_source_;
};

// The `verbs` entry for make_provider. Throws rocehil::Error; on a host without RDMA devices the
// message starts "no RDMA device found".
std::unique_ptr<Provider> make_verbs_provider(const ProviderOptions& options);

}  // namespace rocehil::traffic::verbs
