#include "rocehil/common/error.hpp"

#include <cstring>
#include <utility>

namespace rocehil {

Error::Error(ExitCode exit_code, std::string message, int code)
    : std::runtime_error(std::move(message)), exit_code_(exit_code), code_(code) {}

Error input_error(std::string message) {
  return Error(ExitCode::bad_input, std::move(message));
}

Error system_error(std::string what, int errnum) {
  return Error(ExitCode::infrastructure, what + ": " + std::strerror(errnum), errnum);
}

}  // namespace rocehil
