#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace rocehil::traffic::soft {

// What one MAC control frame asks of the port that receives it: for each priority whose bit is
// set in `priorities`, stop for quanta[p] x 512 bit times (0: resume now, XON). An 802.3x PAUSE
// asks it of every priority at once, with one quanta, as it stops the whole link.
struct PauseRequest {
  std::uint8_t priorities = 0;  // bit p: the frame speaks for priority p
  std::array<std::uint16_t, 8> quanta{};
  bool link_pause = false;  // 802.3x (opcode 0x0001) rather than 802.1Qbb PFC (0x0101)
  bool operator==(const PauseRequest&) const = default;
};

// Parses an Ethernet frame as an AF_PACKET socket hands it up (destination MAC first, no FCS).
// nullopt for anything that is not an untagged MAC control frame (EtherType 0x8808) with the
// PAUSE or PFC opcode and all its fields. The destination is not checked: 802.3 lets a pause
// frame be sent to the port's own unicast address as well as to 01:80:c2:00:00:01. PFC's
// class-enable vector is the low octet of its 16-bit field (the high octet is reserved and
// ignored, as receivers must).
std::optional<PauseRequest> parse_pause_frame(std::span<const std::uint8_t> frame) noexcept;

}  // namespace rocehil::traffic::soft
