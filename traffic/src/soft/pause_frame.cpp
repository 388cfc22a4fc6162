#include "soft/pause_frame.hpp"

#include "rocehil/common/roce_wire.hpp"

namespace rocehil::traffic::soft {

namespace {

constexpr std::size_t ethernet_header_bytes = 14;

std::uint16_t read16(std::span<const std::uint8_t> bytes, std::size_t at) noexcept {
  return static_cast<std::uint16_t>(bytes[at] << 8 | bytes[at + 1]);
}

}  // namespace

std::optional<PauseRequest> parse_pause_frame(std::span<const std::uint8_t> frame) noexcept {
  namespace mc = wire::mac_control;
  if (frame.size() < ethernet_header_bytes + mc::pause_payload_size) return std::nullopt;
  if (read16(frame, 12) != wire::ethertype::mac_control) return std::nullopt;
  const auto payload = frame.subspan(ethernet_header_bytes);
  PauseRequest request;
  switch (read16(payload, 0)) {
    case mc::pause:
      request.link_pause = true;
      request.priorities = 0xff;
      request.quanta.fill(read16(payload, 2));
      return request;
    case mc::pfc:
      if (payload.size() < mc::pfc_payload_size) return std::nullopt;
      request.priorities = payload[3];
      for (std::size_t p = 0; p < request.quanta.size(); ++p)
        request.quanta[p] = read16(payload, 4 + 2 * p);
      return request;
    default: return std::nullopt;
  }
}

}  // namespace rocehil::traffic::soft
