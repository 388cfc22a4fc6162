#pragma once

// For tests that hold a hot path to allocating nothing: linking rocehil_allocation_counter
// replaces the global operator new with one that counts every call in the process.

#include <cstddef>

namespace rocehil::testing {

// Every operator new since the process started.
std::size_t allocations();

}  // namespace rocehil::testing
