#include "verbs/udp_sport.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cerrno>

namespace rocehil::traffic::verbs {

UdpSourcePort::UdpSourcePort() {
  // Never dlclose'd: the library is libibverbs' own mlx5 provider, already mapped when a
  // ConnectX device is open, and unloading it under live QPs would be fatal.
  void* library = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    load_error_ = fmt::format(
        "dlopen(\"libmlx5.so.1\") failed: {} (install ibverbs-providers, "
        "rdma-core >= 29)",
        reason != nullptr ? reason : "unknown error");
    return;
  }
  is_supported_ = reinterpret_cast<IsSupported>(dlsym(library, "mlx5dv_is_supported"));
  modify_udp_sport_ =
      reinterpret_cast<ModifyUdpSport>(dlsym(library, "mlx5dv_modify_qp_udp_sport"));
  if (is_supported_ == nullptr || modify_udp_sport_ == nullptr) {
    load_error_ =
        "libmlx5.so.1 has no mlx5dv_modify_qp_udp_sport (rdma-core older than 29; "
        "upgrade rdma-core)";
    is_supported_ = nullptr;
    modify_udp_sport_ = nullptr;
  }
}

const UdpSourcePort& UdpSourcePort::instance() {
  static const UdpSourcePort loaded;
  return loaded;
}

std::string UdpSourcePort::unsupported_reason(ibv_device* device) const {
  if (!load_error_.empty()) return load_error_;
  if (!is_supported_(device)) {
    return fmt::format(
        "{} is not an mlx5 (ConnectX) device, and per-QP UDP source ports are an "
        "mlx5 direct-verbs feature",
        ibv_get_device_name(device));
  }
  return {};
}

int UdpSourcePort::set(ibv_qp* qp, std::uint16_t port) const noexcept {
  if (modify_udp_sport_ == nullptr) return EOPNOTSUPP;
  return modify_udp_sport_(qp, port);
}

}  // namespace rocehil::traffic::verbs
