#pragma once

#include <string>

namespace rocehil::testbed {

// Turns the calling process into a daemon: forks, and in the child starts a session, points
// stdin, stdout and stderr at /dev/null and writes its pid to `pid_file`. Returns true in the
// child; false in the parent, once the child has written the file. Throws rocehil::Error when
// it cannot fork or the child cannot write the file.
bool detach_daemon(const std::string& pid_file);

}  // namespace rocehil::testbed
