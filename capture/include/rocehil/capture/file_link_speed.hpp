#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rocehil/capture/file_source.hpp"

namespace rocehil::capture {

// The link speed a capture file's pause quanta are turned into time at (one quantum is 512 bit
// times), and where it came from, said beside every pause time: `rocehil analyze` of a file
// `rocehil capture --write` made must grade as the live capture did.
struct LinkSpeed {
  double gbps = 100;
  std::string source;  // "--link-gbps", "the file's if_speed (interface 0 'm1')", ...
};

// `given` (--link-gbps) when set; else the speed every interface of the file that states one
// (if_speed) agrees on; else 100 Gb/s, saying the file states none. Throws rocehil::Error (bad
// input) when the file's interfaces state different speeds: one speed cannot be right for both,
// and the message says how to choose.
LinkSpeed file_link_speed(const std::string& file, const std::vector<FileInterface>& interfaces,
                          std::optional<double> given);

}  // namespace rocehil::capture
