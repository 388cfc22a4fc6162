#pragma once

// Inside the DPDK backend module: a source on one ethdev port (dpdk_source.cpp). rocehil reaches
// it through the module's entry (dpdk_backend_entry.cpp), never by name.

#include <memory>
#include <vector>

#include "rocehil/capture/dpdk_source.hpp"

namespace rocehil::capture::dpdk {

// One source per receive queue (options.queues). Throws rocehil::Error, as DpdkSource::open
// documents.
std::vector<std::unique_ptr<DpdkSource>> open_port_sources(const DpdkSourceOptions& options);

}  // namespace rocehil::capture::dpdk
