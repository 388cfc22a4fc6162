#pragma once

// Inside the DPDK backend module: a source on one ethdev port (dpdk_source.cpp). rocehil reaches
// it through the module's entry (dpdk_backend_entry.cpp), never by name.

#include <memory>

#include "rocehil/capture/dpdk_source.hpp"

namespace rocehil::capture::dpdk {

// Throws rocehil::Error, as DpdkSource::open documents.
std::unique_ptr<DpdkSource> open_port_source(const DpdkSourceOptions& options);

}  // namespace rocehil::capture::dpdk
