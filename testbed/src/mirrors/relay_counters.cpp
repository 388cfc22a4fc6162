#include "rocehil/testbed/relay_counters.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace rocehil::testbed {

nlohmann::json to_json(const RelayCounters& c) {
  return {{"frames", c.frames},
          {"bytes", c.bytes},
          {"truncated", c.truncated},
          {"dropped", c.dropped},
          {"send_errors", c.send_errors},
          {"unknown_port", c.unknown_port},
          {"next_sequence", c.next_sequence},
          {"frame_bytes_kept", c.frame_bytes_kept},
          {"last_error",
           c.last_errno == 0 ? nlohmann::json() : nlohmann::json(std::strerror(c.last_errno))},
          {"last_errno", c.last_errno},
          {"written_at_ns", c.written_at_ns}};
}

bool write_relay_counters(const std::string& path, const RelayCounters& c) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << to_json(c).dump() << '\n';
    if (!out) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
}

std::optional<RelayCounters> read_relay_counters(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    RelayCounters c;
    c.frames = j.at("frames").get<std::uint64_t>();
    c.bytes = j.at("bytes").get<std::uint64_t>();
    c.truncated = j.at("truncated").get<std::uint64_t>();
    c.dropped = j.at("dropped").get<std::uint64_t>();
    c.send_errors = j.at("send_errors").get<std::uint64_t>();
    c.unknown_port = j.at("unknown_port").get<std::uint64_t>();
    c.next_sequence = j.at("next_sequence").get<std::uint32_t>();
    c.frame_bytes_kept = j.at("frame_bytes_kept").get<std::size_t>();
    c.last_errno = j.at("last_errno").get<int>();
    c.written_at_ns = j.at("written_at_ns").get<std::int64_t>();
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace rocehil::testbed
