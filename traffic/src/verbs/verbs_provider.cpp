#include "verbs/verbs_provider.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "rocehil/common/error.hpp"
#include "verbs/completion_queue.hpp"
#include "verbs/queue_pair.hpp"
#include "verbs/udp_sport.hpp"

namespace rocehil::traffic::verbs {

namespace {

constexpr int access_flags =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

}  // namespace

VerbsProvider::VerbsProvider(const ProviderOptions& options)
    : device_(open_device(options)),
      async_events_(
          std::make_unique<AsyncEventReader>(device_->context.get(), device_->name, events_)),
      psn_source_(std::random_device{}()) {}

// Registrations go first (member order), then this provider's share of the device; CQs and QPs
// still alive keep the device open until they go.
VerbsProvider::~VerbsProvider() = default;

MemoryRegion VerbsProvider::remember(Registration registration, std::byte* data,
                                     std::uint64_t length, std::uint64_t io_address) {
  // Not mr->addr: for a dma-buf MR libibverbs stores the fd offset there, not the iova.
  MemoryRegion region;
  region.data = data;
  region.length = length;
  region.remote_address = io_address;
  region.lkey = registration.mr->lkey;
  region.rkey = registration.mr->rkey;
  registrations_.insert_or_assign(region.lkey, std::move(registration));
  return region;
}

MemoryRegion VerbsProvider::register_memory(std::size_t length) {
  if (length == 0) throw input_error("register_memory: a memory region of 0 bytes");
  Registration registration;
  registration.host = HostBuffer::allocate(length);
  registration.mr =
      register_mr(device_->pd.get(), registration.host.data(), length, access_flags, device_->name);
  std::byte* data = registration.host.data();
  return remember(std::move(registration), data, length, reinterpret_cast<std::uintptr_t>(data));
}

MemoryRegion VerbsProvider::register_gpu_memory(int gpu, std::size_t length) {
  Registration registration;
  registration.gpu = std::make_unique<CudaMemory>(CudaMemory::allocate(gpu, length));
  const std::uint64_t pointer = registration.gpu->device_pointer();
  ibv_pd* pd = device_->pd.get();

  // dma-buf first: it needs no out-of-tree kernel module. The iova is the device pointer, so
  // SGEs and RETHs use device pointers as they would host addresses. The fd can be closed once
  // registered: the MR holds its own reference to the dma-buf.
  std::string dmabuf_failure;
  RegionKind kind = RegionKind::gpu_dmabuf;
  try {
    const DmabufExport exported = registration.gpu->export_dmabuf();
    errno = 0;
    ibv_mr* mr =
        ibv_reg_dmabuf_mr(pd, exported.offset, length, pointer, exported.fd.get(), access_flags);
    if (mr != nullptr) {
      registration.mr = MemoryRegistration(mr);
    } else {
      dmabuf_failure = fmt::format("ibv_reg_dmabuf_mr: {}", std::strerror(errno_or(EINVAL)));
    }
  } catch (const Error& error) {
    dmabuf_failure = error.what();
  }

  if (!registration.mr) {
    // Registering the device pointer as if it were host memory works when nvidia-peermem
    // teaches the kernel to pin GPU pages.
    errno = 0;
    ibv_mr* mr = ibv_reg_mr(pd, reinterpret_cast<void*>(pointer), length, access_flags);
    if (mr == nullptr) {
      const int error = errno_or(EINVAL);
      throw Error(ExitCode::infrastructure,
                  fmt::format("cannot register {} bytes of GPU {} memory with {}: dma-buf: {}; "
                              "ibv_reg_mr of the device pointer: {} (load nvidia-peermem, or use "
                              "CUDA >= 11.7 with the open GPU kernel modules and Linux >= 5.12 "
                              "for dma-buf)",
                              length, gpu, device_->name, dmabuf_failure, std::strerror(error)),
                  error);
    }
    registration.mr = MemoryRegistration(mr);
    kind = RegionKind::gpu_peer_memory;
  }
  MemoryRegion region = remember(std::move(registration), nullptr, length, pointer);
  region.kind = kind;
  return region;
}

const CudaMemory* VerbsProvider::gpu_memory(const MemoryRegion& region) const {
  const auto it = registrations_.find(region.lkey);
  return it == registrations_.end() ? nullptr : it->second.gpu.get();
}

void VerbsProvider::write_region(const MemoryRegion& region, std::uint64_t offset,
                                 std::span<const std::byte> bytes) {
  if (const CudaMemory* gpu = gpu_memory(region)) return gpu->copy_from_host(offset, bytes);
  Provider::write_region(region, offset, bytes);
}

void VerbsProvider::read_region(const MemoryRegion& region, std::uint64_t offset,
                                std::span<std::byte> bytes) const {
  if (const CudaMemory* gpu = gpu_memory(region)) return gpu->copy_to_host(offset, bytes);
  Provider::read_region(region, offset, bytes);
}

void VerbsProvider::deregister_memory(const MemoryRegion& region) {
  if (registrations_.erase(region.lkey) == 0) {
    throw input_error(
        fmt::format("deregister_memory: no region with lkey {:#x} is registered with "
                    "the verbs provider on {}",
                    region.lkey, device_->name));
  }
}

std::unique_ptr<CompletionQueue> VerbsProvider::create_cq(std::uint32_t depth) {
  return std::make_unique<VerbsCompletionQueue>(device_, depth);
}

std::string VerbsProvider::udp_sport_unsupported() const {
  return UdpSourcePort::instance().unsupported_reason(device_->context->device);
}

std::unique_ptr<QueuePair> VerbsProvider::create_qp(CompletionQueue& cq, const QpOptions& options) {
  auto* verbs_cq = dynamic_cast<VerbsCompletionQueue*>(&cq);
  if (verbs_cq == nullptr || verbs_cq->core()->device != device_) {
    throw input_error(
        fmt::format("create_qp: the completion queue was not created by the verbs "
                    "provider on {}",
                    device_->name));
  }
  return std::make_unique<VerbsQueuePair>(verbs_cq->core(), options, psn_source_() & 0xffffff);
}

std::unique_ptr<Provider> make_verbs_provider(const ProviderOptions& options) {
  return std::make_unique<VerbsProvider>(options);
}

}  // namespace rocehil::traffic::verbs
