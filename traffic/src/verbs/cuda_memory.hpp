#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "verbs/handles.hpp"

// GPU memory for the verbs provider, through the CUDA driver API loaded at run time with
// dlopen("libcuda.so.1"). Nothing links against CUDA, so the same binary runs on hosts without a
// GPU; only a run that asks for GPU memory needs the driver, and it gets an error naming what is
// missing.
namespace rocehil::traffic::verbs {

struct CudaDriver;  // the driver entry points, resolved once per process (cuda_memory.cpp)

// A dma-buf exported for GPU memory: the fd and where the allocation starts inside it.
struct DmabufExport {
  FileDescriptor fd;
  std::uint64_t offset = 0;
};

// One cuMemAlloc'd allocation in GPU `gpu`'s primary context (retained, so it is the context the
// CUDA runtime and NCCL use too). Move-only; the destructor frees it and never throws.
class CudaMemory {
 public:
  // Allocates at least `length` bytes, rounded up to whole 64 KiB GPU pages (which are whole host
  // pages too, as dma-buf export needs), with CU_POINTER_ATTRIBUTE_SYNC_MEMOPS set.
  // Throws rocehil::Error naming the missing library or symbol, the GPU, or the CUDA error.
  static CudaMemory allocate(int gpu, std::size_t length);

  CudaMemory(CudaMemory&& other) noexcept;
  CudaMemory& operator=(CudaMemory&& other) noexcept;
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;
  ~CudaMemory();

  std::uint64_t device_pointer() const noexcept { return pointer_; }
  std::size_t length() const noexcept { return length_; }
  int gpu() const noexcept { return gpu_; }

  // Synchronous copies (cuMemcpyHtoD / DtoH); throw rocehil::Error on a CUDA error or a range
  // outside the allocation.
  void copy_from_host(std::size_t offset, std::span<const std::byte> source) const;
  void copy_to_host(std::size_t offset, std::span<std::byte> destination) const;

  // A dma-buf fd covering the allocation (cuMemGetHandleForAddressRange, CUDA >= 11.7 and a
  // kernel driver with dma-buf support). Throws rocehil::Error saying why not.
  DmabufExport export_dmabuf() const;

 private:
  CudaMemory() = default;
  void release() noexcept;
  void make_current() const;

  const CudaDriver* driver_ = nullptr;
  int gpu_ = -1;
  int device_ = 0;             // CUdevice
  void* context_ = nullptr;    // CUcontext: the retained primary context, released last
  std::uint64_t pointer_ = 0;  // CUdeviceptr
  std::size_t length_ = 0;
};

// Empty when the CUDA driver loads and initialises; otherwise the reason. Never throws.
std::string cuda_unavailable_reason();

}  // namespace rocehil::traffic::verbs
