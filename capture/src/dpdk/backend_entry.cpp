// The DPDK backend module's one exported symbol (see dpdk_backend_abi.hpp).
#include <exception>

#include "dpdk/backend_abi.hpp"
#include "dpdk/headers.hpp"
#include "dpdk/port_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture::dpdk {
namespace {

bool open_behind_the_door(const DpdkSourceOptions& options,
                          std::vector<std::unique_ptr<DpdkSource>>& sources,
                          BackendFailure& failure) noexcept {
  try {
    sources = open_port_sources(options);
    return true;
  } catch (const Error& e) {
    failure.exit_code = static_cast<int>(e.exit_code());
    failure.error_number = e.code();
    failure.message = e.what();
  } catch (const std::exception& e) {
    failure.exit_code = static_cast<int>(ExitCode::infrastructure);
    failure.message = e.what();
  }
  return false;
}

}  // namespace
}  // namespace rocehil::capture::dpdk

extern "C" __attribute__((visibility("default"))) const rocehil::capture::dpdk::BackendEntry*
rocehil_dpdk_backend_v1() {
  static const rocehil::capture::dpdk::BackendEntry entry{
      .build_id = rocehil::capture::dpdk::backend_build_id(),
      .dpdk_version = rte_version(),
      .open = &rocehil::capture::dpdk::open_behind_the_door,
  };
  return &entry;
}
