#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rocehil::remote {

// What a host does when its login is neither root nor allowed passwordless sudo.
enum class WithoutRoot {
  run_as_login,  // the program runs as that user (traffic needs no root; a setting then fails
                 // naming the host)
  refuse,        // exit 77 with not_root_marker on stderr: what needs root must not half-run
};

// What a refusing host prints on stderr, for the controller to recognise.
constexpr std::string_view not_root_marker = "rocehil: not root, no passwordless sudo";

// The remote words that run `program args...` on a host as root: itself when the login is root,
// through `sudo -n` when that user may use it without a password, otherwise as `without_root`
// says. A fixed /bin/sh script: the program and its arguments are its positional parameters,
// never part of its text.
std::vector<std::string> as_root(const std::string& program, const std::vector<std::string>& args,
                                 WithoutRoot without_root);

}  // namespace rocehil::remote
