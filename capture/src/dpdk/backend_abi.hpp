#pragma once

// The one door between rocehil and its DPDK backend. The backend is a module of its own,
// librocehil-dpdk.so (package rocehil-dpdk), that rocehil loads with dlopen the first time a DPDK
// port is asked for: rocehil itself needs none of DPDK's forty-odd libraries, so a traffic host or
// a pcap capture host runs it without them, and a capture server installs the backend beside it.
//
// Both sides are built from one tree by one compiler, and rocehil-dpdk depends on rocehil of
// exactly its version, so C++ types cross the door as they are. The build id is checked all the
// same: a backend copied by hand from another build would otherwise crash at the first call.
// Exceptions never cross it: the backend catches its own and hands back what they said.

#include <memory>
#include <string>
#include <vector>

#include "rocehil/capture/dpdk_source.hpp"

namespace rocehil::capture::dpdk {

// The symbol the module exports, and the only one: `extern "C" const BackendEntry* NAME()`.
inline constexpr const char* backend_entry_symbol = "rocehil_dpdk_backend_v1";

// Why an open failed, as the rocehil::Error thrown behind the door said it.
struct BackendFailure {
  int exit_code = 3;
  int error_number = 0;
  std::string message;
};

struct BackendEntry {
  const char* build_id;      // backend_build_id() of the build it came from
  const char* dpdk_version;  // rte_version(): "DPDK 22.11.11"
  // One source per receive queue into `sources`, or false with `failure` filled in. Never
  // throws.
  bool (*open)(const DpdkSourceOptions& options, std::vector<std::unique_ptr<DpdkSource>>& sources,
               BackendFailure& failure) noexcept;
};

using BackendEntryFunction = const BackendEntry* (*)();

// "rocehil VERSION, COMPILER VERSION": what both sides must agree on. ROCEHIL_VERSION comes from
// the build.
constexpr const char* backend_build_id() {
  return "rocehil " ROCEHIL_VERSION ", " __VERSION__;
}

}  // namespace rocehil::capture::dpdk
