#include "rocehil/capture/open_live_source.hpp"

#include <fmt/format.h>

#include "rocehil/capture/dpdk_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {

std::unique_ptr<LiveSource> open_live_source(const LiveSourceSpec& spec) {
  if (spec.backend == "pcap") {
    if (spec.iface.empty())
      throw input_error("--backend pcap needs --iface: the interface to capture on");
    if (!spec.dpdk_args.empty()) throw input_error("--dpdk-args is for --backend dpdk");
    return PcapSource::open({.iface = spec.iface,
                             .snaplen = spec.snaplen,
                             .filter = spec.filter,
                             .buffer_bytes = spec.buffer_mb << 20,
                             .block_timeout_ms = 100,
                             .outbound_too = spec.outbound_too});
  }
  if (spec.backend != "dpdk")
    throw input_error(fmt::format("--backend {}: the backends are pcap and dpdk", spec.backend));
  if (spec.dpdk_args.empty())
    throw input_error(
        "--backend dpdk needs --dpdk-args: the EAL arguments, e.g. \"--no-huge --no-pci "
        "--vdev=net_af_packet0,iface=eth3\"");
  if (spec.filter != CaptureFilter::all)
    throw input_error(fmt::format(
        "--filter {}: the dpdk backend captures everything the port receives; use --filter all "
        "(the analysis still separates RoCE, CNP and PFC)",
        to_string(spec.filter)));
  DpdkSourceOptions d;
  d.eal_args = spec.dpdk_args;
  d.port = spec.iface;
  d.snaplen = spec.snaplen;
  return DpdkSource::open(d);
}

double pause_link_gbps(const LiveSource& source, std::optional<double> given) {
  if (given && *given > 0) return *given;
  const std::uint64_t speed = source.interface_info().speed_bps;
  return speed != 0 ? static_cast<double>(speed) / 1e9 : 100.0;
}

}  // namespace rocehil::capture
