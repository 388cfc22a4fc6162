#include "lifecycle/dataplane_status.hpp"

#include <exception>

namespace rocehil::testbed {

DataplaneStatus read_dataplane_status(const std::string& counters_file) {
  DataplaneStatus out;
  out.counters_file = counters_file;
  try {
    out.ports = dataplane::read_shared_counters(counters_file);
  } catch (const std::exception& e) {
    // Absent, not zeros: a switch that counts nothing and one whose counts cannot be read differ.
    out.problem = e.what();
  }
  return out;
}

}  // namespace rocehil::testbed
