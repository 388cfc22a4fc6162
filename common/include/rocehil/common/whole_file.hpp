#pragma once

#include <string>
#include <string_view>

namespace rocehil {

// Writes `content` as the whole of `path`, or leaves `path` as it was: written to PATH.partial,
// synced, then renamed over it, so a reader (or a crash) never sees half a file. Throws
// rocehil::Error (infrastructure) naming the file and the errno.
void write_file_whole(const std::string& path, std::string_view content);

}  // namespace rocehil
