#pragma once

// The report's list of flows, built from the analyzer's tables once, at the end.

#include <vector>

#include "flow_tables.hpp"
#include "rocehil/capture/analysis.hpp"

namespace rocehil::capture {

// Every flow of both tables, in report order: descending bytes, then ascending source,
// destination and QP, so that equal flows always list the same way.
std::vector<Flow> flows_in_order(const FlowTables<V4Key>& v4, const FlowTables<V6Key>& v6);

}  // namespace rocehil::capture
