#include "rocehil/traffic/provider.hpp"

#include <fmt/format.h>

#include "rocehil/common/error.hpp"
#include "soft/soft_provider.hpp"
#if ROCEHIL_HAVE_VERBS
#include "verbs/verbs_provider.hpp"
#endif

namespace rocehil::traffic {

std::string_view to_string(Opcode op) {
  switch (op) {
    case Opcode::send: return "send";
    case Opcode::send_with_imm: return "send_with_imm";
    case Opcode::write: return "write";
    case Opcode::write_with_imm: return "write_with_imm";
    case Opcode::read: return "read";
    case Opcode::recv: return "recv";
  }
  return "?";
}

std::string_view to_string(WcStatus status) {
  switch (status) {
    case WcStatus::success: return "success";
    case WcStatus::local_length_error: return "local_length_error";
    case WcStatus::local_protection_error: return "local_protection_error";
    case WcStatus::remote_access_error: return "remote_access_error";
    case WcStatus::remote_invalid_request: return "remote_invalid_request";
    case WcStatus::retry_exceeded: return "retry_exceeded";
    case WcStatus::flushed: return "flushed";
  }
  return "?";
}

std::unique_ptr<Provider> make_provider(std::string_view name, const ProviderOptions& options) {
  if (name == "soft") return soft::make_soft_provider(options);
  if (name == "verbs") {
#if ROCEHIL_HAVE_VERBS
    return verbs::make_verbs_provider(options);
#else
    throw Error(ExitCode::infrastructure,
                "the verbs provider was not built: libibverbs-dev was missing when rocehil was "
                "configured (apt-get install libibverbs-dev, then rebuild)");
#endif
  }
  throw input_error(fmt::format("provider '{}' is unknown; use 'soft' or 'verbs'", name));
}

}  // namespace rocehil::traffic
