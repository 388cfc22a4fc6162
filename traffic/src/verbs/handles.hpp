#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

namespace rocehil::traffic::verbs {

// Owns one libibverbs object and destroys it with `Destroy`; move-only, like Seastar's file_desc.
// The destroy calls return an errno value that a destructor cannot report (destructors never
// throw). The failure they guard against, EBUSY because a child object is still alive, is
// prevented by ownership instead: every owner declares its handles in creation order, and children
// hold a shared reference to what they were created from, so teardown runs child-first.
template <typename T, auto Destroy>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T* raw) noexcept : raw_(raw) {}
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  T* get() const noexcept { return raw_; }
  T* operator->() const noexcept { return raw_; }
  explicit operator bool() const noexcept { return raw_ != nullptr; }

  void reset() noexcept {
    if (raw_ != nullptr) {
      (void)Destroy(raw_);
      raw_ = nullptr;
    }
  }

 private:
  T* raw_ = nullptr;
};

using Context = Handle<ibv_context, &ibv_close_device>;
using ProtectionDomain = Handle<ibv_pd, &ibv_dealloc_pd>;
using MemoryRegistration = Handle<ibv_mr, &ibv_dereg_mr>;
using CompletionQueueHandle = Handle<ibv_cq, &ibv_destroy_cq>;
using QueuePairHandle = Handle<ibv_qp, &ibv_destroy_qp>;
using AddressHandle = Handle<ibv_ah, &ibv_destroy_ah>;

// The list from ibv_get_device_list. Devices opened from it stay valid after it is freed.
class DeviceList {
 public:
  // An empty list when the kernel has no RDMA support (ENOSYS) or no device is present: callers
  // decide whether that is an error. `error()` keeps the errno for their message.
  static DeviceList get() noexcept;

  DeviceList(DeviceList&& other) noexcept
      : list_(std::exchange(other.list_, nullptr)),
        count_(std::exchange(other.count_, 0)),
        error_(other.error_) {}
  DeviceList& operator=(DeviceList&&) = delete;
  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  ~DeviceList() {
    if (list_ != nullptr) ibv_free_device_list(list_);
  }

  std::span<ibv_device* const> devices() const noexcept {
    return {list_, static_cast<std::size_t>(count_)};
  }
  int error() const noexcept { return error_; }

 private:
  DeviceList(ibv_device** list, int count, int error) : list_(list), count_(count), error_(error) {}
  ibv_device** list_ = nullptr;
  int count_ = 0;
  int error_ = 0;
};

// Page-aligned, zeroed host memory for a memory region.
class HostBuffer {
 public:
  HostBuffer() = default;
  static HostBuffer allocate(std::size_t length);  // throws rocehil::Error
  HostBuffer(HostBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), length_(std::exchange(other.length_, 0)) {}
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  std::byte* data() const noexcept { return data_; }
  std::size_t length() const noexcept { return length_; }  // rounded up to whole pages

 private:
  std::byte* data_ = nullptr;
  std::size_t length_ = 0;
};

// A file descriptor (the dma-buf exported for GPU memory).
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const noexcept { return fd_; }

 private:
  int fd_ = -1;
};

// Named factories: each throws rocehil::Error (exit code infrastructure) carrying errno and the
// device (and QP) it failed on.
Context open_context(ibv_device* device);
ProtectionDomain allocate_pd(ibv_context* context, std::string_view device);
MemoryRegistration register_mr(ibv_pd* pd, void* address, std::size_t length, int access,
                               std::string_view device);
CompletionQueueHandle create_cq(ibv_context* context, int depth, std::string_view device);
QueuePairHandle create_qp(ibv_pd* pd, ibv_qp_init_attr& attributes, std::string_view device);
AddressHandle create_ah(ibv_pd* pd, ibv_ah_attr& attributes, std::string_view device,
                        std::uint32_t qpn);

// errno after a failed call, or `fallback` where a provider library failed without setting it
// (so a message never ends in "Success").
int errno_or(int fallback) noexcept;

}  // namespace rocehil::traffic::verbs
