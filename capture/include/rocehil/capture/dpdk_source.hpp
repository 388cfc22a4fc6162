#pragma once

// Live capture from a DPDK port: a NIC by PCI address, or a virtual device such as
// net_af_packet0,iface=eth3 (any Linux interface) or net_pcap0,rx_pcap=FILE (replays a file).
// No DPDK type appears here; when the backend cannot be loaded, open() says why and what to do.
//
// - A replay (net_pcap with rx_pcap, without infinite_rx) ends by itself: DPDK gives no end of
//   file, so next_batch returns 0 once the port has delivered nothing for 100 ms. Its frames keep
//   the file's timestamps (net_pcap hands them over in microseconds: a nanosecond file comes back
//   truncated to the microsecond). Every other port ends only on stop(), and its frames are
//   stamped with the wall clock at each burst.
// - Frames point into DPDK's buffers, which are handed back at the next call; nothing is
//   allocated per frame.
// - Ending a source stops its port but does not close it, so the same port can be opened again
//   later in the process (a virtual device could not come back after a close); one source per
//   port at a time.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocehil/capture/live_source.hpp"

namespace rocehil::capture {

struct DpdkSourceOptions {
  // EAL arguments as one string, split on blanks (no shell involved), e.g.
  // "--no-huge --no-pci -m 256 --vdev=net_af_packet0,iface=veth1". The process may initialise
  // the EAL once; a second open() with other arguments is refused.
  std::string eal_args;
  // Which ethdev port: its name ("net_af_packet0", "0000:3b:00.0") or empty for the only port.
  std::string port;
  std::uint32_t snaplen = 128;
  std::uint16_t burst = 32;  // frames per rte_eth_rx_burst
  std::uint16_t rx_descriptors = 4096;
  std::uint32_t mbufs =
      16383;  // mempool size per queue (with --no-huge and no -m, -m 512 is added)
  // Receive queues, one source each (open_queues), with every frame of a flow on one queue: a
  // NIC spreads them by RSS on the outer IP addresses and UDP ports; net_af_packet needs
  // qpairs equal to this, and its kernel fanout hash spreads them. net_pcap has one.
  std::uint16_t queues = 1;
};

// The DPDK backend is a module of its own, librocehil-dpdk.so (package rocehil-dpdk), loaded the
// first time it is needed, so rocehil runs on hosts without DPDK's libraries. It is looked for at
// $ROCEHIL_DPDK_BACKEND when that is set, else at ../LIBDIR/rocehil/ from the executable's
// directory (where the package and `cmake --install` put it), else beside the executable (the
// build tree).
struct DpdkBackendInfo {
  bool loaded = false;
  std::string path;          // the module loaded, or the places looked at
  std::string dpdk_version;  // "DPDK 22.11.11" when loaded
  std::string problem;       // why it cannot be used, with what to do; empty when loaded
};

// The backend as this process finds it: looked for once, on the first call.
const DpdkBackendInfo& dpdk_backend();

// Whether the DPDK backend can be used here: loads it (and DPDK's libraries, whose constructors
// run) the first time.
bool dpdk_available() noexcept;

// Whether the DPDK backend module is installed where this process looks for it, without loading
// it: what an agent announces in its hello. Loading costs each process about 0.6 MiB of memory of
// its own and 1.5 ms, which thousands of agents on one machine feel; a module that is there but
// does not load says why at the first DPDK capture.
bool dpdk_installed();

class DpdkSource : public LiveSource {
 public:
  // Throws rocehil::Error: EAL initialisation failed (with DPDK's reason), no such port, the
  // port cannot be configured, or the backend cannot be loaded (dpdk_backend().problem).
  static std::unique_ptr<DpdkSource> open(const DpdkSourceOptions& options);
  // One source per receive queue (options.queues), each to be read by its own thread; the port
  // stops when the last of them ends. Counters: each queue's own frames and kernel drops; the
  // port's missed, no-buffer and error counts on queue 0's source, so the sum is the port's.
  // Throws as open() does, and when the port cannot spread frames over that many queues.
  static std::vector<std::unique_ptr<DpdkSource>> open_queues(const DpdkSourceOptions& options);
};

}  // namespace rocehil::capture
