#pragma once

#include <string>

namespace rocehil::remote {

// The path of the running rocehil binary (/proc/self/exe): what runs in a local namespace and
// what --deploy copies. Throws rocehil::Error when it cannot be read.
std::string this_executable();

}  // namespace rocehil::remote
