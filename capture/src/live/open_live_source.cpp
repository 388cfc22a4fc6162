#include "rocehil/capture/open_live_source.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "live/remote_session_source.hpp"
#include "rocehil/capture/dpdk_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {

namespace {

void check_pcap_spec(const LiveSourceSpec& spec) {
  if (spec.iface.empty())
    throw input_error("--backend pcap needs --iface: the interface to capture on");
  if (!spec.dpdk_args.empty()) throw input_error("--dpdk-args is for --backend dpdk");
}

// A remote session's frames carry their tunnel's headers before the snap length's worth.
std::uint32_t backend_snaplen(const LiveSourceSpec& spec) {
  return spec.remote ? std::min<std::uint32_t>(spec.snaplen + max_mirror_overhead, 262144)
                     : spec.snaplen;
}

PcapSourceOptions pcap_options(const LiveSourceSpec& spec) {
  return {.iface = spec.iface,
          .snaplen = backend_snaplen(spec),
          .filter = spec.filter,
          .remote_mirrors = spec.remote.has_value(),
          .buffer_bytes = spec.buffer_mb << 20,
          .block_timeout_ms = 100,
          .outbound_too = spec.outbound_too};
}

DpdkSourceOptions dpdk_options(const LiveSourceSpec& spec) {
  if (spec.dpdk_args.empty())
    throw input_error(
        "--backend dpdk needs --dpdk-args: the EAL arguments, e.g. \"--no-huge --no-pci "
        "--vdev=net_af_packet0,iface=eth3\"");
  if (spec.filter != CaptureFilter::all && !spec.remote)
    throw input_error(fmt::format(
        "--filter {}: the dpdk backend captures everything the port receives; use --filter all "
        "(the analysis still separates RoCE, CNP and PFC)",
        to_string(spec.filter)));
  DpdkSourceOptions d;
  d.eal_args = spec.dpdk_args;
  d.port = spec.iface;
  d.snaplen = backend_snaplen(spec);
  return d;
}

// The backend's sources, each wrapped to take only the remote session when there is one.
std::vector<std::unique_ptr<LiveSource>> for_session(const LiveSourceSpec& spec,
                                                     std::vector<std::unique_ptr<LiveSource>> all) {
  if (!spec.remote) return all;
  for (auto& s : all)
    s = std::make_unique<RemoteSessionSource>(std::move(s), *spec.remote, spec.filter);
  return all;
}

// A fanout group id no other capture of this process uses; other processes' groups on the
// same interface are told apart by the pid (an id taken by another process's group with other
// settings makes joining fail, which is reported, never silently shared).
std::uint16_t new_fanout_group() {
  static std::atomic<std::uint16_t> next{0};
  const auto id = static_cast<std::uint16_t>((::getpid() * 131u + next.fetch_add(1)) & 0xffff);
  return id == 0 ? 1 : id;
}

}  // namespace

std::vector<std::unique_ptr<LiveSource>> open_live_sources(const LiveSourceSpec& spec,
                                                           unsigned workers) {
  std::vector<std::unique_ptr<LiveSource>> sources;
  if (workers <= 1) {
    sources.push_back(open_live_source(spec));
    return sources;
  }
  if (spec.backend == "dpdk") {
    DpdkSourceOptions d = dpdk_options(spec);
    d.queues = static_cast<std::uint16_t>(std::min(workers, 65535u));
    for (auto& queue : DpdkSource::open_queues(d)) sources.push_back(std::move(queue));
    return for_session(spec, std::move(sources));
  }
  if (spec.backend != "pcap") return open_live_sources(spec, 1);  // its error: an unknown name
  check_pcap_spec(spec);
  PcapSourceOptions options = pcap_options(spec);
  options.fanout_group = new_fanout_group();
  for (unsigned w = 0; w < workers; ++w) sources.push_back(PcapSource::open(options));
  return for_session(spec, std::move(sources));
}

std::unique_ptr<LiveSource> open_live_source(const LiveSourceSpec& spec) {
  std::vector<std::unique_ptr<LiveSource>> one;
  if (spec.backend == "pcap") {
    check_pcap_spec(spec);
    one.push_back(PcapSource::open(pcap_options(spec)));
  } else if (spec.backend == "dpdk") {
    one.push_back(DpdkSource::open(dpdk_options(spec)));
  } else {
    throw input_error(fmt::format("--backend {}: the backends are pcap and dpdk", spec.backend));
  }
  return std::move(for_session(spec, std::move(one)).front());
}

double pause_link_gbps(const LiveSource& source, std::optional<double> given) {
  if (given && *given > 0) return *given;
  const std::uint64_t speed = source.interface_info().speed_bps;
  return speed != 0 ? static_cast<double>(speed) / 1e9 : 100.0;
}

}  // namespace rocehil::capture
