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
  // Set when the file's interfaces state different speeds: each interface's (by its index in
  // `interfaces`; one that states none takes `gbps`, the first stated), for
  // AnalyzerOptions::interface_link_gbps.
  std::vector<double> by_interface;
};

// `given` (--link-gbps) when set, for every interface; else each interface's own speed (if_speed):
// one `gbps` when those that state one agree, one per interface when they differ; else 100 Gb/s,
// saying the file states none.
LinkSpeed file_link_speed(const std::vector<FileInterface>& interfaces,
                          std::optional<double> given);

}  // namespace rocehil::capture
