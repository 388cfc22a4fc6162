#include "capture/capture_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cmath>
#include <memory>
#include <optional>

#include "capture/analyze_command.hpp"
#include "capture/capture_text.hpp"
#include "rocehil/capture/capture_run.hpp"
#include "rocehil/capture/open_live_source.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/common/units.hpp"
#include "shared/interrupt.hpp"

namespace rocehil::cli {

namespace {

struct CaptureOptions {
  std::string backend = "pcap";
  std::string iface;
  std::string dpdk_args;
  double duration_s = 0;
  std::uint32_t snaplen = 128;
  std::string filter = "all";
  std::string write;
  std::uint32_t ring_files = 0;
  std::uint32_t ring_mb = 0;
  std::uint32_t buffer_mb = 64;
  std::optional<double> link_gbps;
  std::uint32_t bin_ms = 10;
  std::optional<std::size_t> top;
  bool outbound_too = false;
  PauseOptions pause;
  bool json = false;
  bool progress = true;
  unsigned workers = 1;
  std::optional<std::uint32_t> remote_session;
  std::string remote_source;
};

std::optional<capture::RemoteSessionSpec> remote_session(const CaptureOptions& o) {
  if (!o.remote_session) {
    if (!o.remote_source.empty())
      throw input_error("--remote-source goes with --remote-session: the session to take");
    return std::nullopt;
  }
  capture::RemoteSessionSpec spec{.session = *o.remote_session, .source = std::nullopt};
  if (!o.remote_source.empty()) {
    spec.source = capture::IpAddress::parse(o.remote_source);
    if (!spec.source)
      throw input_error(
          fmt::format("--remote-source '{}': give the switch's tunnel source "
                      "address, e.g. 10.0.0.11",
                      o.remote_source));
  }
  return spec;
}

int run_capture(const CaptureOptions& o) {
  if (o.duration_s < 0) throw input_error("--duration: give seconds above 0, or leave it out");
  auto sources = capture::open_live_sources({.backend = o.backend,
                                             .iface = o.iface,
                                             .dpdk_args = o.dpdk_args,
                                             // The option's check admits only the filters' names.
                                             .filter = *capture::capture_filter_from(o.filter),
                                             .snaplen = o.snaplen,
                                             .buffer_mb = o.buffer_mb,
                                             .outbound_too = o.outbound_too,
                                             .remote = remote_session(o)},
                                            o.workers);
  std::vector<capture::LiveSource*> source_list;
  for (const auto& s : sources) source_list.push_back(s.get());
  const capture::LiveSource* source = source_list.front();
  capture::CaptureRunOptions run_options;
  run_options.write_path = o.write;
  run_options.ring_files = o.ring_files;
  run_options.ring_bytes = std::uint64_t{o.ring_mb} << 20;
  run_options.snaplen = o.snaplen;
  run_options.duration_s = o.duration_s;
  run_options.analyzer.link_gbps = capture::pause_link_gbps(*source, o.link_gbps);
  if (o.link_gbps && *o.link_gbps > 0)
    run_options.file_speed_bps = static_cast<std::uint64_t>(std::llround(*o.link_gbps * 1e9));
  run_options.analyzer.bin_ms = o.bin_ms;
  o.pause.apply_to(run_options.analyzer);
  capture::CaptureRun run(source_list, run_options);

  std::optional<InterruptScope> interrupts(std::in_place);
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  // Always, even with --json (which owns stdout): a person or a script waits for this line to
  // know the capture is listening.
  fmt::print(stderr, "capture: {} on {} ({}){}{}; Ctrl-C to stop\n", o.backend,
             source->interface_info().name, o.filter,
             o.workers > 1 ? fmt::format(", {} workers", o.workers) : "",
             o.duration_s > 0 ? fmt::format(" for {} s", o.duration_s) : "");
  const capture::CaptureSummary summary = run.run([&](const capture::CaptureProgress& p) {
    if (interrupts->flag().load()) run.stop();
    // A terminal only: a log gets the line above and the summary, no progress frames.
    if (!o.progress || !tty) return;
    fmt::print(stderr, "\r\033[Kcapture  {}  {} frames  {}", format_duration_ns(p.elapsed_s * 1e9),
               p.frames, format_bytes(static_cast<double>(p.bytes)));
  });
  interrupts.reset();  // a second Ctrl-C during the summary ends the process
  if (tty && o.progress) fmt::print(stderr, "\r\033[K");

  const CaptureSetup setup{o.backend, o.filter, o.snaplen};
  if (o.json) {
    print_analysis_json(summary.analysis, o.top, {{"capture", capture_json(summary, setup)}},
                        o.workers);
  } else {
    fmt::print("{}", render_capture_text(summary, setup, text_flow_limit(o.top)));
  }
  std::fflush(stdout);
  if (summary.counters.dropped() > 0)
    fmt::print(stderr, "rocehil: warning: the capture lost {} frames (coverage {:.4f}%)\n",
               summary.counters.dropped(), 100.0 * summary.counters.coverage());
  if (summary.counters.moved > 0)
    fmt::print(stderr,
               "rocehil: warning: {} frames went to another worker's queue because their own "
               "was nearly full: their flows were split over workers, and PSN gaps on them may "
               "be false; give the rings more room (framecnt) or use fewer workers\n",
               summary.counters.moved);
  if (!summary.write_error.empty()) {
    fmt::print(stderr, "rocehil: error: {}\n", summary.write_error);
    return static_cast<int>(ExitCode::infrastructure);
  }
  return 0;
}

}  // namespace

void add_capture_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CaptureOptions>();
  CLI::App* cmd = app.add_subcommand(
      "capture",
      "Capture from a switch mirror port (libpcap or DPDK), write pcapng and analyse it live: "
      "CNPs per QP, PFC pauses and storms, ECN, per-flow losses, and the capture's own loss.");
  cmd->footer(R"(
Frames go to the pcapng file first, then to the same analyzer as 'rocehil analyze', so a live
capture and a later analysis of its file agree. Every report states coverage = captured /
(captured + dropped), with the drops the kernel (pcap_stats) or the NIC (rte_eth_stats) counted:
an analysis that hides capture loss would be wrong. The pcapng records the interface name, speed
and filter, and its statistics block records the drops.

Remote mirrors: a switch's ERSPAN (type I, II, III) or GRE (transparent Ethernet bridging)
session arriving at a collector is opened frame by frame, here and in 'rocehil analyze': the
mirrored frames are analysed as a local mirror port's, and "mirror" in the report gives each
session's frames, the frames its GRE sequence numbers say were lost on the way (coverage), and
how its ERSPAN III timestamps timed them. --remote-session picks one session: the kernel keeps
GRE packets only (snapped at --snaplen plus room for the tunnel headers), and --filter is run
on the frame inside the tunnel.

Backends:
  pcap  libpcap on a Linux interface: a TPACKET_V3 ring (--buffer-mb), a BPF filter
        (--filter), nanosecond timestamps.
  dpdk  DPDK in the process: a NIC by PCI address, or a virtual device; --iface names the port
        when the EAL arguments make several.

Examples:
  rocehil capture --iface ens3f1 --filter roce --duration 60 --write spine1.pcapng
  rocehil capture --iface mirror0 --filter cnp-pfc --write cap.pcapng --ring-files 10 --ring-mb 512
  rocehil capture --iface eth2 --remote-session 3 --remote-source 10.0.0.13 --filter roce
        (spine 3's ERSPAN session 3, among the sessions of every spine reaching eth2)
  rocehil capture --backend dpdk --dpdk-args "-a 0000:3b:00.1" --duration 30 --json
  rocehil capture --backend dpdk --dpdk-args "--no-huge --no-pci
        --vdev=net_af_packet0,iface=eth3,qpairs=1,framesz=10240,blocksz=20480,framecnt=8192"
        (any Linux interface through DPDK; a large ring, and frames up to 10 KB whole)
  rocehil capture --backend dpdk --dpdk-args "--no-huge --no-pci --vdev=net_pcap0,rx_pcap=old.pcap"
        (replays a file through DPDK; ends when the file does)
  rocehil capture --backend dpdk --dpdk-args "-a 0000:3b:00.1" --workers 8 --write m.pcapng
        (8 RX queues spread by RSS, 8 workers, files m-w1.pcapng ... m-w8.pcapng)

With --workers N, every frame of a flow goes to the same one of N workers: with pcap, N sockets
share the interface in a PACKET_FANOUT group hashed on addresses and ports; with dpdk, the port
gets N receive queues, spread by RSS on the outer IP addresses and UDP ports (a NIC), or by the
kernel's fanout hash (net_af_packet, which must be given qpairs=N). Each worker writes its own
file and analyses its share, and the shares are joined into one analysis (its timeline counts
from the capture's start). "capture.workers" lists each worker's frames, drops and coverage; the
totals are their sums (a DPDK port's missed and error counts are the port's, on worker 1).

Ctrl-C or --duration ends the capture: files are flushed and the summary printed (exit 0).
Exit codes: 0 captured, 2 bad usage (no such interface, not root), 3 the file could not be
written (the analysis is still printed).)");
  cmd->add_option("--backend", o->backend, "pcap (libpcap) or dpdk")
      ->check(CLI::IsMember({"pcap", "dpdk"}))
      ->capture_default_str();
  cmd->add_option("--iface", o->iface,
                  "Interface to capture on (pcap); the DPDK port name (dpdk, optional)");
  cmd->add_option("--dpdk-args", o->dpdk_args,
                  "EAL arguments for the dpdk backend, one string, split on blanks");
  cmd->add_option("--duration", o->duration_s, "Seconds to capture; default: until Ctrl-C");
  cmd->add_option("--snaplen", o->snaplen,
                  "Bytes kept of each frame; 128 holds every RoCE header (flow bytes use wire "
                  "lengths, so nothing is lost)")
      ->check(CLI::Range(64u, 262144u))
      ->capture_default_str();
  cmd->add_option("--filter", o->filter,
                  "all: every frame; roce: RoCEv2 and PFC/PAUSE; cnp-pfc: only CNPs and "
                  "PFC/PAUSE (pcap backend)")
      ->check(CLI::IsMember({"all", "roce", "cnp-pfc"}))
      ->capture_default_str();
  cmd->add_option("--remote-session", o->remote_session,
                  "Take this remote mirror session (ERSPAN session ID, or GRE key) from the GRE "
                  "packets reaching the interface; --filter then applies inside the tunnel")
      ->check(CLI::Range(0u, 4294967295u));
  cmd->add_option("--remote-source", o->remote_source,
                  "With --remote-session: only from this switch's tunnel source address");
  cmd->add_option("--workers", o->workers,
                  "Worker threads, each with its own socket in a PACKET_FANOUT group (pcap) or "
                  "DPDK receive queue (dpdk, RSS): every frame of a flow goes to the same one; "
                  "each writes its own file (-w1, -w2, ... before the extension)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  cmd->add_option("--write", o->write, "pcapng file to write (with --ring-files: the base name)");
  cmd->add_option("--ring-files", o->ring_files,
                  "Keep only the newest N files of --ring-mb each (a capture that runs for hours)")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--ring-mb", o->ring_mb, "Size of each ring file in MiB")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--buffer-mb", o->buffer_mb,
                  "Kernel capture ring in MiB (pcap); small rings drop frames in bursts")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_flag("--outbound-too", o->outbound_too,
                "Also capture frames this host sends out of the interface (pcap); a mirror port "
                "only receives, so by default only inbound frames are kept");
  cmd->add_option("--link-gbps", o->link_gbps,
                  "Speed of the mirrored link, to turn pause quanta into time; default: the "
                  "interface's reported speed, else 100")
      ->check(CLI::Range(0.001, 10000.0));
  cmd->add_option("--bin-ms", o->bin_ms, "Width of a timeline bin in milliseconds")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  add_pause_options(*cmd, o->pause);
  cmd->add_option("--top", o->top, "Flows and CNP QPs to list; 0 lists all");
  cmd->add_flag("--json", o->json,
                "Print JSON: the analysis as 'rocehil analyze --json' (schema_version 1) plus "
                "'capture' (frames, drops, coverage, files)");
  cmd->add_flag_callback(
      "--no-progress", [o] { o->progress = false; }, "Do not show progress on stderr");
  cmd->callback([o, &exit_code] {
    if (!o->write.empty() && o->ring_files == 0 && o->ring_mb != 0)
      throw input_error("--ring-mb needs --ring-files: how many files the ring keeps");
    if (o->write.empty() && (o->ring_files != 0 || o->ring_mb != 0))
      throw input_error("--ring-files and --ring-mb need --write: the base name of the files");
    exit_code = run_capture(*o);
  });
}

}  // namespace rocehil::cli
