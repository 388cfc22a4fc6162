#include "verbs/handles.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "rocehil/common/error.hpp"

namespace rocehil::traffic::verbs {

int errno_or(int fallback) noexcept {
  return errno != 0 ? errno : fallback;
}

namespace {

// A process holding a verbs provider may fork (the agent starts helper programs, and libraries
// call system()). A child sharing pages that are registered for DMA breaks them on the parent's
// next write: copy-on-write moves the parent's page, the NIC keeps the old one. Kernels >= 5.13
// copy such pages at fork by themselves (IBV_FORK_UNNEEDED); on older ones libibverbs must mark
// registered memory MADV_DONTFORK, which it does only after ibv_fork_init, before any
// registration.
void protect_registrations_from_fork() noexcept {
  static const int once = [] {
    if (ibv_is_fork_initialized() == IBV_FORK_DISABLED) return ibv_fork_init();
    return 0;
  }();
  (void)once;  // a failure (EINVAL: memory registered already) leaves the old behaviour
}

}  // namespace

DeviceList DeviceList::get() noexcept {
  protect_registrations_from_fork();
  errno = 0;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return DeviceList(nullptr, 0, errno_or(ENODEV));
  return DeviceList(list, count, 0);
}

HostBuffer HostBuffer::allocate(std::size_t length) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t rounded = (length + page - 1) / page * page;
  // aligned_alloc wants a size that is a multiple of the alignment: `rounded` is.
  void* memory = std::aligned_alloc(page, rounded);
  if (memory == nullptr) {
    throw system_error(fmt::format("allocating {} bytes of page-aligned memory", rounded), ENOMEM);
  }
  std::memset(memory, 0, rounded);
  HostBuffer buffer;
  buffer.data_ = static_cast<std::byte*>(memory);
  buffer.length_ = rounded;
  return buffer;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    length_ = std::exchange(other.length_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() {
  std::free(data_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

Context open_context(ibv_device* device) {
  errno = 0;
  ibv_context* context = ibv_open_device(device);
  if (context == nullptr) {
    throw system_error(fmt::format("ibv_open_device({}) (is /dev/infiniband readable? check "
                                   "'ibv_devinfo -d {}')",
                                   ibv_get_device_name(device), ibv_get_device_name(device)),
                       errno_or(ENODEV));
  }
  return Context(context);
}

ProtectionDomain allocate_pd(ibv_context* context, std::string_view device) {
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(context);
  if (pd == nullptr) {
    throw system_error(fmt::format("ibv_alloc_pd on {}", device), errno_or(ENOMEM));
  }
  return ProtectionDomain(pd);
}

MemoryRegistration register_mr(ibv_pd* pd, void* address, std::size_t length, int access,
                               std::string_view device) {
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(pd, address, length, access);
  if (mr == nullptr) {
    const int error = errno_or(ENOMEM);
    // ENOMEM here is nearly always the locked-memory limit, not a lack of RAM.
    const char* hint = error == ENOMEM ? " (raise 'ulimit -l' / memlock for the agent)" : "";
    throw system_error(fmt::format("ibv_reg_mr of {} bytes on {}{}", length, device, hint), error);
  }
  return MemoryRegistration(mr);
}

CompletionQueueHandle create_cq(ibv_context* context, int depth, std::string_view device) {
  errno = 0;
  ibv_cq* cq = ibv_create_cq(context, depth, nullptr, nullptr, 0);
  if (cq == nullptr) {
    throw system_error(fmt::format("ibv_create_cq (depth {}) on {}", depth, device),
                       errno_or(ENOMEM));
  }
  return CompletionQueueHandle(cq);
}

QueuePairHandle create_qp(ibv_pd* pd, ibv_qp_init_attr& attributes, std::string_view device) {
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd, &attributes);
  if (qp == nullptr) {
    throw system_error(
        fmt::format("ibv_create_qp ({}, tx depth {}, rx depth {}, inline {}) on {}",
                    attributes.qp_type == IBV_QPT_UD ? "UD" : "RC", attributes.cap.max_send_wr,
                    attributes.cap.max_recv_wr, attributes.cap.max_inline_data, device),
        errno_or(EINVAL));
  }
  return QueuePairHandle(qp);
}

AddressHandle create_ah(ibv_pd* pd, ibv_ah_attr& attributes, std::string_view device,
                        std::uint32_t qpn) {
  errno = 0;
  ibv_ah* ah = ibv_create_ah(pd, &attributes);
  if (ah == nullptr) {
    throw system_error(fmt::format("ibv_create_ah for UD QP {:#x} on {} (sgid_index {})", qpn,
                                   device, attributes.grh.sgid_index),
                       errno_or(EINVAL));
  }
  return AddressHandle(ah);
}

}  // namespace rocehil::traffic::verbs
