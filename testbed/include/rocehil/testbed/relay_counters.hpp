#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rocehil::testbed {

// What a spine's mirror relay has done since it started (mirror_relay.hpp). It rewrites them to
// DIR/run/<netns>.mirror-relay.json every second, which `status` reads: nothing has to ask the
// relay itself.
struct RelayCounters {
  std::uint64_t frames = 0;        // copies sent to the capture namespace
  std::uint64_t bytes = 0;         // of those frames as mirrored, before truncation
  std::uint64_t truncated = 0;     // copies cut short (--mirror-truncate, or the MTU)
  std::uint64_t dropped = 0;       // copies the kernel dropped before the relay read them
  std::uint64_t send_errors = 0;   // copies the raw socket refused (each took its sequence number)
  std::uint64_t unknown_port = 0;  // copies whose port the relay could not tell (index 0)
  std::uint32_t next_sequence = 0;
  std::size_t frame_bytes_kept = 0;  // at most, of each frame
  int last_errno = 0;                // of the last failed receive or send, 0 for none
  std::int64_t written_at_ns = 0;    // CLOCK_REALTIME
};

nlohmann::json to_json(const RelayCounters& c);

// Written to a temporary name and renamed, so a reader never sees half a file; false when it
// cannot be written (the relay goes on relaying).
bool write_relay_counters(const std::string& path, const RelayCounters& c);

// nullopt when the file is missing or is not what write_relay_counters wrote.
std::optional<RelayCounters> read_relay_counters(const std::string& path);

}  // namespace rocehil::testbed
