#pragma once

#include <stdexcept>
#include <string>

namespace rocehil {

// Exit codes shared by every command (design: "Errors, exit codes, output").
enum class ExitCode : int {
  qualified = 0,  // everything passed
  threshold_failed = 1,
  bad_input = 2,       // bad usage or configuration: the user can fix it
  infrastructure = 3,  // host unreachable, agent died, I/O failure
};

// The one exception type of setup and control paths. `what()` is a complete sentence for a
// person: what failed, where, and what to do. `code` is an errno value when one caused it (0
// otherwise) so callers can branch without parsing text.
class Error : public std::runtime_error {
 public:
  Error(ExitCode exit_code, std::string message, int code = 0);

  ExitCode exit_code() const noexcept { return exit_code_; }
  int code() const noexcept { return code_; }

 private:
  ExitCode exit_code_;
  int code_;
};

// Bad input that the user can fix (exit code 2).
Error input_error(std::string message);

// A failed system call: appends strerror(errno) to `what` (exit code 3).
Error system_error(std::string what, int errnum);

}  // namespace rocehil
