// A DPDK backend module from another build, for the loader's refusal of it: the same entry as the
// real module's, with another build id. Its open is never reached.
#include "dpdk/backend_abi.hpp"

namespace {

bool never_opened(const rocehil::capture::DpdkSourceOptions&,
                  std::vector<std::unique_ptr<rocehil::capture::DpdkSource>>&,
                  rocehil::capture::dpdk::BackendFailure& failure) noexcept {
  failure.message = "the loader called a backend from another build";
  return false;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const rocehil::capture::dpdk::BackendEntry*
rocehil_dpdk_backend_v1() {
  static const rocehil::capture::dpdk::BackendEntry entry{
      .build_id = "rocehil 0.0.1, another compiler",
      .dpdk_version = "DPDK 0.0.0",
      .open = &never_opened,
  };
  return &entry;
}
