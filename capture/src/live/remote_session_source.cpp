#include "live/remote_session_source.hpp"

#include <fmt/format.h>
#include <pcap/pcap.h>

#include "frames/frame_layout.hpp"
#include "frames/mirror_layout.hpp"
#include "rocehil/capture/pcap_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {

// The capture filter compiled for Ethernet frames, as pcap_source compiles it for the kernel.
struct RemoteSessionSource::Filter {
  bpf_program program{};
  bool any = true;  // no filter: every mirrored frame passes
  ~Filter() {
    if (!any) pcap_freecode(&program);
  }
};

RemoteSessionSource::RemoteSessionSource(std::unique_ptr<LiveSource> tunnel_packets,
                                         const RemoteSessionSpec& session, CaptureFilter filter)
    : source_(std::move(tunnel_packets)), session_(session), filter_(std::make_unique<Filter>()) {
  const std::string expression = bpf_expression(filter);
  if (!expression.empty()) {
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 262144);
    if (!dead) throw Error(ExitCode::infrastructure, "libpcap: cannot open a dead handle");
    const int compiled =
        pcap_compile(dead, &filter_->program, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN);
    const std::string why = compiled != 0 ? pcap_geterr(dead) : "";
    pcap_close(dead);
    if (compiled != 0)
      throw Error(
          ExitCode::infrastructure,
          fmt::format("--filter {}: the BPF filter does not compile: {}", to_string(filter), why));
    filter_->any = false;
  }
  info_ = source_->interface_info();
  info_.bpf_filter =
      fmt::format("{} (kernel); then session {}{}{}{}", info_.bpf_filter, session.session,
                  session.source ? " from " + session.source->to_string() : std::string(),
                  expression.empty() ? "" : ", inside the tunnel: ", expression);
}

RemoteSessionSource::~RemoteSessionSource() = default;

bool RemoteSessionSource::takes(const Frame& f) {
  if (f.link_type != link_type::ethernet) return false;
  const FrameLayout l = locate_layers(f.data, f.caplen);
  if (l.mirror == MirrorKind::none) return false;
  MirrorHeader& m = header_;
  read_mirror_header(f.data, f.caplen, l, m);
  if (session_.source && m.outer_src != *session_.source) return false;
  // A broken tunnel header is kept: whoever it came from, it is the collector's to report.
  if (l.kind == FrameKind::mirror_malformed) return true;
  const bool has_id = m.kind == MirrorKind::erspan2 || m.kind == MirrorKind::erspan3 ||
                      (m.kind == MirrorKind::gre_teb && m.has_key);
  if (has_id) {
    const std::uint32_t id = m.kind == MirrorKind::gre_teb ? m.key : m.session_id;
    if (id != session_.session) return false;
  }
  sessions_.count(m, f.wire_len, FrameTiming::capture, 0);
  if (filter_->any) return true;
  if (l.l2 == 0 || l.end <= l.l2) return false;  // no mirrored frame to judge (ERSPAN III IP)
  pcap_pkthdr header{};
  header.caplen = l.end - l.l2;
  header.len = l.carried;
  return pcap_offline_filter(&filter_->program, &header, f.data + l.l2) != 0;
}

std::size_t RemoteSessionSource::next_batch(std::span<Frame> out) {
  for (;;) {
    const std::size_t n = source_->next_batch(out);
    if (n == 0) return 0;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (takes(out[i])) out[kept++] = out[i];
    handed_on_ += kept;
    if (kept > 0) return kept;
  }
}

void RemoteSessionSource::stop() noexcept {
  source_->stop();
}

CaptureCounters RemoteSessionSource::counters() {
  CaptureCounters c = source_->counters();
  c.captured = handed_on_;
  c.upstream_counted = true;
  c.lost_upstream = 0;
  for (const MirrorSession& s : sessions_.result()) c.lost_upstream += s.lost();
  return c;
}

const InterfaceInfo& RemoteSessionSource::interface_info() const noexcept {
  return info_;
}

bool RemoteSessionSource::replays_a_file() const noexcept {
  return source_->replays_a_file();
}

bool RemoteSessionSource::thins_mirror_sessions() const noexcept {
  return !filter_->any;
}

}  // namespace rocehil::capture
