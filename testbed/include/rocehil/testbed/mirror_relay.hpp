#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/testbed/options.hpp"
#include "rocehil/testbed/relay_counters.hpp"

namespace rocehil::testbed {

// A spine's remote mirror session in user space (`rocehil testbed mirror-relay`, which `up`
// starts in each spine and `down` stops). The kernel here has no GRE or ERSPAN module, so the
// relay does what the switch's ASIC would: it reads every copy tc mirred sends to the spine's
// mirror veth with a packet socket, puts the GRE/ERSPAN headers in front (mirror_encap.hpp) and
// sends it with a raw IPv4 socket of protocol 47, the kernel writing the IPv4 header, from the
// spine's management address to the collector's.

struct RelayOptions {
  std::string netns;  // entered before any socket is opened
  MirrorMode mode = MirrorMode::erspan3;
  int session = 0;                 // ERSPAN session ID, GRE key
  std::string source;              // an address of the namespace
  std::string destination;         // the collector
  std::string interface;           // the far end of the spine's mirror veth
  std::vector<std::string> ports;  // the mirrored ports, to tell a copy's port (mirror_ports.hpp)
  int truncate = 0;                // bytes of each frame kept, 0: all that fits
  std::string counters_file;       // rewritten every second (relay_counters.hpp)
};

class MirrorRelay {
 public:
  // Enters the namespace, opens and binds both sockets and reads the ports' addresses; throws
  // rocehil::Error naming what failed and where.
  explicit MirrorRelay(RelayOptions options);
  ~MirrorRelay();
  MirrorRelay(const MirrorRelay&) = delete;
  MirrorRelay& operator=(const MirrorRelay&) = delete;

  // Relays until `stop` is set, in batches, allocating nothing per frame; writes the counters
  // file every second and once more at the end, and returns them. Failures of single frames are
  // counted, not thrown.
  RelayCounters run(const std::atomic<bool>& stop);

  int mtu() const;  // of the route to the collector

 private:
  struct Impl;  // the sockets and the batch's buffers
  std::unique_ptr<Impl> impl_;
};

}  // namespace rocehil::testbed
