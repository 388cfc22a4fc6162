#include "rocehil/capture/dpdk_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {

// This build found no DPDK: the backend is refused with the way to get it.
bool dpdk_available() noexcept {
  return false;
}

std::unique_ptr<DpdkSource> DpdkSource::open(const DpdkSourceOptions&) {
  throw input_error(
      "--backend dpdk: this rocehil was built without DPDK (apt-get install libdpdk-dev, then "
      "rebuild); use --backend pcap");
}

}  // namespace rocehil::capture
