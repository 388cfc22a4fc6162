#include "verbs/cuda_memory.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {

// The few CUDA driver types and constants used here, declared instead of including cuda.h so the
// build needs no CUDA toolkit. They are the driver's stable C ABI: CUresult is an int-sized enum,
// CUdevice an int, CUdeviceptr an unsigned 64-bit integer on 64-bit hosts, CUcontext an opaque
// pointer; the enum values are those of cuda.h.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void*;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124;
constexpr int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 1;
constexpr int CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6;
// GPU pages are 64 KiB: nvidia-peermem pins whole ones, so an allocation rounded to them never
// shares a pinned page with another (perftest's cuda_memory.c rounds the same way).
constexpr std::size_t gpu_page = 64 * 1024;

// Entry points resolved with dlsym. cuda.h maps several names to `_v2` symbols with #define
// (cuMemAlloc -> cuMemAlloc_v2, ...); the unsuffixed exports are the old 32-bit-size ABI, so the
// `_v2` names are looked up explicitly.
struct CudaDriver {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*pointer_set_attribute)(const void*, int, CUdeviceptr) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;  // optional
  // Optional: CUDA >= 11.7. Without it GPU memory is registered through nvidia-peermem.
  CUresult (*get_handle_for_address_range)(void*, CUdeviceptr, std::size_t, int,
                                           unsigned long long) = nullptr;
};

namespace {

struct LoadedDriver {
  CudaDriver api;
  std::string error;  // non-empty: the driver is unusable, and why
};

template <typename Function>
bool resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

LoadedDriver load_driver() {
  LoadedDriver loaded;
  // Never dlclose'd: libcuda starts threads and registers exit handlers that must outlive every
  // allocation, and CudaMemory destructors may run late in process teardown.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    loaded.error = fmt::format(
        "GPU memory needs the CUDA driver library, but dlopen(\"libcuda.so.1\") failed: {}; "
        "install the NVIDIA driver's libcuda (Debian: libcuda1 from non-free, or NVIDIA's "
        "cuda-drivers) or run without GPU memory",
        reason != nullptr ? reason : "unknown error");
    return loaded;
  }
  CudaDriver& api = loaded.api;
  const std::pair<const char*, bool> required[] = {
      {"cuInit", resolve(library, "cuInit", api.init)},
      {"cuDeviceGetCount", resolve(library, "cuDeviceGetCount", api.device_get_count)},
      {"cuDeviceGet", resolve(library, "cuDeviceGet", api.device_get)},
      {"cuDeviceGetAttribute", resolve(library, "cuDeviceGetAttribute", api.device_get_attribute)},
      {"cuDevicePrimaryCtxRetain",
       resolve(library, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain)},
      {"cuDevicePrimaryCtxRelease_v2",
       resolve(library, "cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release) ||
           resolve(library, "cuDevicePrimaryCtxRelease", api.primary_ctx_release)},
      {"cuCtxSetCurrent", resolve(library, "cuCtxSetCurrent", api.ctx_set_current)},
      {"cuMemAlloc_v2", resolve(library, "cuMemAlloc_v2", api.mem_alloc)},
      {"cuMemFree_v2", resolve(library, "cuMemFree_v2", api.mem_free)},
      {"cuMemcpyHtoD_v2", resolve(library, "cuMemcpyHtoD_v2", api.memcpy_htod)},
      {"cuMemcpyDtoH_v2", resolve(library, "cuMemcpyDtoH_v2", api.memcpy_dtoh)},
      {"cuPointerSetAttribute",
       resolve(library, "cuPointerSetAttribute", api.pointer_set_attribute)},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      loaded.error = fmt::format(
          "libcuda.so.1 has no {}: the NVIDIA driver is too old for GPU "
          "memory (install driver R450 or newer)",
          name);
      return loaded;
    }
  }
  resolve(library, "cuGetErrorName", api.get_error_name);
  resolve(library, "cuMemGetHandleForAddressRange", api.get_handle_for_address_range);

  const CUresult result = api.init(0);
  if (result != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (api.get_error_name != nullptr) api.get_error_name(result, &name);
    loaded.error = fmt::format(
        "cuInit failed with CUDA error {} ({}): no usable GPU or a driver "
        "and kernel module mismatch (check 'nvidia-smi')",
        result, name != nullptr ? name : "unknown");
  }
  return loaded;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = load_driver();
  return loaded;
}

const CudaDriver& driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.error.empty()) throw Error(ExitCode::infrastructure, loaded.error);
  return loaded.api;
}

void check(const CudaDriver& api, CUresult result, std::string_view what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (api.get_error_name != nullptr) api.get_error_name(result, &name);
  throw Error(ExitCode::infrastructure, fmt::format("{} failed with CUDA error {} ({})", what,
                                                    result, name != nullptr ? name : "unknown"));
}

std::size_t host_page() {
  return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::string cuda_unavailable_reason() {
  return loaded_driver().error;
}

CudaMemory CudaMemory::allocate(int gpu, std::size_t length) {
  const CudaDriver& api = driver();
  int count = 0;
  check(api, api.device_get_count(&count), "cuDeviceGetCount");
  if (gpu < 0 || gpu >= count) {
    throw input_error(
        fmt::format("GPU {} does not exist: this host has {} CUDA device(s)", gpu, count));
  }
  if (length == 0) throw input_error("GPU memory of 0 bytes requested");

  CudaMemory memory;
  memory.driver_ = &api;
  memory.gpu_ = gpu;
  check(api, api.device_get(&memory.device_, gpu), fmt::format("cuDeviceGet({})", gpu));
  check(api, api.primary_ctx_retain(&memory.context_, memory.device_),
        fmt::format("cuDevicePrimaryCtxRetain(GPU {})", gpu));
  memory.make_current();
  const std::size_t rounded = (length + gpu_page - 1) / gpu_page * gpu_page;
  CUdeviceptr pointer = 0;
  check(api, api.mem_alloc(&pointer, rounded),
        fmt::format("cuMemAlloc of {} bytes on GPU {}", rounded, gpu));
  memory.pointer_ = pointer;
  memory.length_ = rounded;
  // NVIDIA's GPUDirect RDMA guide: without SYNC_MEMOPS a cuMemcpy into memory the NIC also
  // writes may return before it is visible, so the data check could read stale bytes.
  const unsigned int on = 1;
  check(api, api.pointer_set_attribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, pointer),
        fmt::format("cuPointerSetAttribute(SYNC_MEMOPS) on GPU {}", gpu));
  return memory;
}

CudaMemory::CudaMemory(CudaMemory&& other) noexcept
    : driver_(std::exchange(other.driver_, nullptr)),
      gpu_(std::exchange(other.gpu_, -1)),
      device_(std::exchange(other.device_, 0)),
      context_(std::exchange(other.context_, nullptr)),
      pointer_(std::exchange(other.pointer_, 0)),
      length_(std::exchange(other.length_, 0)) {}

CudaMemory& CudaMemory::operator=(CudaMemory&& other) noexcept {
  if (this != &other) {
    release();
    driver_ = std::exchange(other.driver_, nullptr);
    gpu_ = std::exchange(other.gpu_, -1);
    device_ = std::exchange(other.device_, 0);
    context_ = std::exchange(other.context_, nullptr);
    pointer_ = std::exchange(other.pointer_, 0);
    length_ = std::exchange(other.length_, 0);
  }
  return *this;
}

CudaMemory::~CudaMemory() {
  release();
}

void CudaMemory::release() noexcept {
  if (driver_ == nullptr || context_ == nullptr) return;
  // Results ignored: nothing useful can be done about a failing free in a destructor.
  (void)driver_->ctx_set_current(context_);
  if (pointer_ != 0) (void)driver_->mem_free(pointer_);
  (void)driver_->primary_ctx_release(device_);
  context_ = nullptr;
  pointer_ = 0;
}

void CudaMemory::make_current() const {
  // The context is per thread and other code may have switched it; setting it is cheap.
  check(*driver_, driver_->ctx_set_current(context_), fmt::format("cuCtxSetCurrent(GPU {})", gpu_));
}

void CudaMemory::copy_from_host(std::size_t offset, std::span<const std::byte> source) const {
  if (offset > length_ || source.size() > length_ - offset) {
    throw input_error(fmt::format("copy of {} bytes at offset {} is outside GPU memory of {} bytes",
                                  source.size(), offset, length_));
  }
  make_current();
  check(*driver_, driver_->memcpy_htod(pointer_ + offset, source.data(), source.size()),
        fmt::format("cuMemcpyHtoD on GPU {}", gpu_));
}

void CudaMemory::copy_to_host(std::size_t offset, std::span<std::byte> destination) const {
  if (offset > length_ || destination.size() > length_ - offset) {
    throw input_error(fmt::format("copy of {} bytes at offset {} is outside GPU memory of {} bytes",
                                  destination.size(), offset, length_));
  }
  make_current();
  check(*driver_, driver_->memcpy_dtoh(destination.data(), pointer_ + offset, destination.size()),
        fmt::format("cuMemcpyDtoH on GPU {}", gpu_));
}

DmabufExport CudaMemory::export_dmabuf() const {
  if (driver_->get_handle_for_address_range == nullptr) {
    throw Error(ExitCode::infrastructure,
                "libcuda.so.1 has no cuMemGetHandleForAddressRange (dma-buf export needs CUDA 11.7 "
                "/ driver R515 or newer)");
  }
  int supported = 0;
  check(*driver_,
        driver_->device_get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device_),
        "cuDeviceGetAttribute(DMA_BUF_SUPPORTED)");
  if (supported == 0) {
    throw Error(ExitCode::infrastructure,
                fmt::format("GPU {} cannot export dma-buf (the driver reports no support: it needs "
                            "the open GPU kernel modules and Linux >= 5.12)",
                            gpu_));
  }
  make_current();
  // The exported range must start and end on host page boundaries.
  const std::size_t page = host_page();
  const CUdeviceptr base = pointer_ & ~static_cast<CUdeviceptr>(page - 1);
  DmabufExport exported;
  exported.offset = pointer_ - base;
  const std::size_t size = (length_ + exported.offset + page - 1) / page * page;
  int fd = -1;
  check(*driver_,
        driver_->get_handle_for_address_range(&fd, base, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                              0),
        fmt::format("cuMemGetHandleForAddressRange(dma-buf, GPU {})", gpu_));
  exported.fd = FileDescriptor(fd);
  return exported;
}

}  // namespace rocehil::traffic::verbs
