#pragma once

// Finding and loading librocehil-dpdk.so (see dpdk_backend_abi.hpp and DpdkBackendInfo).

#include <string>
#include <vector>

#include "dpdk/backend_abi.hpp"
#include "rocehil/capture/dpdk_source.hpp"

namespace rocehil::capture::dpdk {

inline constexpr const char* backend_file_name = "librocehil-dpdk.so";

// Where to look, in order: $ROCEHIL_DPDK_BACKEND alone when `override_path` is not empty, else
// EXE_DIR/RELATIVE (the installed layout) and EXE_DIR/librocehil-dpdk.so (the build tree).
std::vector<std::string> backend_candidates(const std::string& override_path,
                                            const std::string& executable_dir,
                                            const std::string& installed_relative);

// Loads the module at `path` (it stays loaded) and checks its build id. `entry` is set when it
// loaded; the info says what happened either way.
DpdkBackendInfo load_backend(const std::string& path, const BackendEntry*& entry);

}  // namespace rocehil::capture::dpdk
