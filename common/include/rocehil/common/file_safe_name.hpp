#pragma once

#include <string>
#include <string_view>

namespace rocehil {

// `name` as a file name, or a part of one, that is safe on a remote command line too: every
// character but an ASCII letter, a digit, '.', '_', '-' and those of `also_kept` becomes
// `replacement`, and a first character '.' or '-' becomes '_' (never "." or "..", never read as
// an option). Empty, it is "_". The one sanitizer of names that become files: run ids, kept
// captures, the fabric's settings journals.
std::string file_safe_name(std::string_view name, char replacement = '_',
                           std::string_view also_kept = {});

}  // namespace rocehil
