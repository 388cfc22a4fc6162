#pragma once

// PFC's side of a lossless switch: the bytes each ingress port has queued anywhere in the switch,
// per lossless priority. Past XOFF the port must tell its sender to pause (and refresh that while
// over); back under XON it must tell it to resume; past XOFF + headroom a lossless packet is
// dropped, which a lossless fabric must never do, so it is counted as a defect. Sized once for
// the switch's ports; nothing allocates after.

#include <array>
#include <cstdint>
#include <vector>

#include "lossless/qos_profile.hpp"

namespace rocehil::testbed::lossless {

struct PfcCounters {
  std::uint64_t xoff_sent = 0;  // transitions to XOFF (refreshes are the sender's business)
  std::uint64_t xon_sent = 0;
  std::uint64_t lossless_drops = 0;
  std::uint64_t lossless_dropped_bytes = 0;
  std::uint32_t peak_bytes = 0;  // the most the priority held at once
};

class IngressBuffers {
 public:
  IngressBuffers(int ports, const PortProfile& profile);
  // New thresholds (a knob changed on a running switch); the bytes held stay counted.
  void retune(const PortProfile& profile);

  enum class Arrival : std::uint8_t { admitted, admitted_xoff, dropped };
  // `bytes` of lossless `priority` arrived on `port`: admitted (and it crossed XOFF: send XOFF
  // out of that port), or dropped beyond the headroom.
  Arrival arrive(int port, int priority, std::uint32_t bytes);
  // `bytes` that came in on `port` left the switch; true when the priority fell under XON and
  // XON must be sent out of that port.
  bool depart(int port, int priority, std::uint32_t bytes);

  bool xoff(int port, int priority) const { return at(port, priority).xoff; }
  std::uint32_t held_bytes(int port, int priority) const { return at(port, priority).bytes; }
  const PfcCounters& counters(int port, int priority) const { return at(port, priority).counters; }

 private:
  struct Account {
    std::uint32_t bytes = 0;
    bool xoff = false;
    PfcCounters counters{};
  };
  Account& at(int port, int priority) { return accounts_[port * classes + priority]; }
  const Account& at(int port, int priority) const { return accounts_[port * classes + priority]; }

  std::uint32_t xoff_, xon_, headroom_;
  std::vector<Account> accounts_;
};

// A port's pause state per priority, as a PFC frame received on it sets it: a quanta is 512 bit
// times at the port's speed; quanta 0 resumes at once. Times are the caller's clock (ns).
class PauseState {
 public:
  explicit PauseState(double port_bps) : port_bps_(port_bps) {}

  static std::uint64_t quanta_ns(std::uint16_t quanta, double port_bps) {
    return port_bps <= 0 ? 0 : static_cast<std::uint64_t>(quanta * 512.0 / port_bps * 1e9);
  }
  // Bit p of `enable` set: priority p paused for quanta[p] from now (802.1Qbb; 802.3x PAUSE is
  // every priority with one quanta).
  void received(std::uint8_t enable, const std::array<std::uint16_t, classes>& quanta,
                std::uint64_t now_ns);
  // Bit p set: priority p may not send at `now_ns`.
  std::uint8_t paused(std::uint64_t now_ns) const;
  // When the next pause in force ends (for the loop's timer); 0 when none is.
  std::uint64_t next_end_ns(std::uint64_t now_ns) const;

 private:
  double port_bps_;
  std::array<std::uint64_t, classes> until_ns_{};
};

}  // namespace rocehil::testbed::lossless
