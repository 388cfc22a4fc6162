#pragma once

// The preflight probe's samples (data/probe/*.txt, real hosts' output with sources noted), for
// the tests here and the agent's, which read the same QoS tools' output.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rocehil::preflight::testing {

inline std::string probe_sample(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data/probe" / name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of one section ("@@ mlnx_qos ens1f0np0") of a probe sample's text.
inline std::string probe_section(const std::string& text, const std::string& header) {
  std::istringstream in(text);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("@@ ")) {
      inside = line == header;
      continue;
    }
    if (inside) out += line + "\n";
  }
  return out;
}

}  // namespace rocehil::preflight::testing
