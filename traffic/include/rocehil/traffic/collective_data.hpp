#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rocehil/traffic/collective.hpp"

namespace rocehil::traffic {

// The data of a verified iteration. Every rank's input is a fixed function of (rank, offset), so
// the controller can tell what each rank's output must be without seeing anyone's memory, and
// compare a CRC-32 per rank after one iteration (reductions are XOR).

// Writes rank `rank`'s inputs into its region (region.size() >= plan.region_bytes()).
void fill_inputs(const CollectivePlan& plan, int rank, std::span<std::byte> region);

// CRC-32 (as Ethernet's) of the rank's output ranges, one after the other.
std::uint32_t output_crc32(const CollectivePlan& plan, int rank, std::span<const std::byte> region);

// What output_crc32 must be on every rank after one iteration from fill_inputs; nothing for a
// rank whose result has no single right answer (incast's receiver keeps whichever sender's
// data landed last) or that has no output. O(N x bytes) time, O(bytes) memory.
std::vector<std::optional<std::uint32_t>> expected_output_crc32s(const CollectivePlan& plan);

}  // namespace rocehil::traffic
