#include "rocehil/run/transport_fault.hpp"

#include <fmt/format.h>

#include "rocehil/traffic/provider.hpp"

namespace rocehil::run {

std::optional<reports::AttemptError> fabric_fault(const std::vector<TrafficSide>& sides,
                                                  const std::string& host) {
  const TrafficSide* first = nullptr;
  std::uint64_t errors = 0;
  std::size_t failed = 0;
  for (const TrafficSide& side : sides) {
    if (side.results == nullptr || side.results->errors == 0) continue;
    errors += side.results->errors;
    ++failed;
    const auto& status = side.results->first_error_status;
    if (!status) continue;
    if (!traffic::caused_by_fabric(*status)) return std::nullopt;
    if (first == nullptr) first = &side;
  }
  if (first == nullptr) return std::nullopt;
  std::string message = fmt::format("the fabric: {} ({}{})", first->results->first_error,
                                    first->name, first->peer.empty() ? "" : " -> " + first->peer);
  message += fmt::format("; {} transport error{} on {} of {} sides", errors, errors == 1 ? "" : "s",
                         failed, sides.size());
  return reports::AttemptError{host, "traffic", std::move(message), reports::Fault::fabric};
}

}  // namespace rocehil::run
