#pragma once

#include "soft/packet.hpp"
#include "soft/udp_socket.hpp"

namespace rocehil::traffic::soft {

// The addresses and ports a datagram carries from `source` to `destination`, for its ICRC.
inline FlowAddress flow_address(const SocketAddress& source, const SocketAddress& destination) {
  return make_flow(reinterpret_cast<const sockaddr*>(&source.storage),
                   reinterpret_cast<const sockaddr*>(&destination.storage))
      .value_or(FlowAddress{});
}

}  // namespace rocehil::traffic::soft
