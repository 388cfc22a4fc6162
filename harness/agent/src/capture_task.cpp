#include "capture_task.hpp"

#include <unistd.h>

#include <cmath>

#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/mac_address.hpp"
#include "rocehil/capture/open_live_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::agent {

namespace {

// Room left in a protocol line for the rest of the summary.
constexpr std::size_t max_analysis_bytes = max_agent_line_bytes - (64u << 10);

}  // namespace

CaptureSummaryEvent capture_summary_event(const capture::CaptureSummary& s,
                                          const CaptureStartRequest& r, bool stopped) {
  CaptureSummaryEvent e;
  e.stopped = stopped;
  e.backend = r.backend;
  e.iface = s.iface.name;
  e.filter = r.filter;
  e.snaplen = r.snaplen;
  e.start_ns = s.start_ns;
  e.end_ns = s.end_ns;
  e.frames = s.counters.captured;
  e.dropped_buffer = s.counters.dropped_buffer;
  e.dropped_interface = s.counters.dropped_interface;
  e.lost_upstream = s.counters.lost_upstream;
  e.coverage = s.counters.coverage();
  e.files = s.files;
  e.files_deleted = s.files_deleted;
  e.write_error = s.write_error;
  e.analysis_json = capture::to_json_text(s.analysis, r.max_flows);
  if (e.analysis_json.size() > max_analysis_bytes) {
    capture::Analysis smaller = s.analysis;
    smaller.timeline.bins.clear();
    // A flapping link can make thousands of storms; the first ones say what happened.
    if (smaller.pfc.storms.size() > 256) smaller.pfc.storms.resize(256);
    e.analysis_json = capture::to_json_text(smaller, std::min<std::size_t>(r.max_flows, 16),
                                            {{"cut_for_agent_protocol", true}});
  }
  return e;
}

// The protocol checked the source is an IP literal.
static std::optional<capture::RemoteSessionSpec> remote_session(const CaptureStartRequest& r) {
  if (!r.remote_session) return std::nullopt;
  capture::RemoteSessionSpec spec{.session = *r.remote_session, .source = std::nullopt};
  if (r.remote_source) spec.source = capture::IpAddress::parse(*r.remote_source);
  return spec;
}

AgentCapture::AgentCapture(int wake_fd) : wake_fd_(wake_fd) {}

AgentCapture::~AgentCapture() {
  if (run_) run_->stop();
  if (thread_.joinable()) thread_.join();
}

CaptureStartedReply AgentCapture::start(const CaptureStartRequest& request) {
  if (active())
    throw input_error("capture_start: a capture is already running here; send capture_stop first");
  request_ = request;
  summary_.reset();
  failure_.clear();
  finished_ = false;
  source_ = capture::open_live_source({.backend = request.backend,
                                       .iface = request.iface,
                                       .dpdk_args = request.dpdk_args,
                                       // The protocol admits only the filters' names.
                                       .filter = *capture::capture_filter_from(request.filter),
                                       .snaplen = request.snaplen,
                                       .buffer_mb = request.buffer_mb,
                                       .outbound_too = false,
                                       .remote = remote_session(request)});
  capture::CaptureRunOptions options;
  options.write_path = request.write;
  options.ring_files = request.ring_files;
  options.ring_bytes = std::uint64_t{request.ring_mb} << 20;
  options.snaplen = request.snaplen;
  options.duration_s = request.seconds;
  options.analyzer.link_gbps = capture::pause_link_gbps(
      *source_, request.link_gbps > 0 ? std::optional<double>(request.link_gbps) : std::nullopt);
  options.analyzer.storm_ms = request.storm_ms;
  if (request.link_gbps > 0)
    options.file_speed_bps = static_cast<std::uint64_t>(std::llround(request.link_gbps * 1e9));
  options.analyzer.direction =
      request.direction == "leaf-to-spine"   ? capture::MirrorDirection::leaf_to_spine
      : request.direction == "spine-to-leaf" ? capture::MirrorDirection::spine_to_leaf
                                             : capture::MirrorDirection::unknown;
  for (const std::string& mac : request.spine_macs)
    if (auto parsed = capture::parse_mac_address(mac))
      options.analyzer.spine_macs.push_back(*parsed);
  run_ = std::make_unique<capture::CaptureRun>(*source_, options);
  thread_ = std::thread([this] {
    try {
      summary_ = run_->run();
    } catch (const std::exception& e) {
      failure_ = e.what();
    }
    finished_ = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = write(wake_fd_, &one, sizeof one);
  });
  const capture::InterfaceInfo& info = source_->interface_info();
  return {.iface = info.name, .description = info.description, .speed_bps = info.speed_bps};
}

CaptureSummaryEvent AgentCapture::join(bool stopped) {
  thread_.join();
  run_.reset();
  source_.reset();
  if (!summary_) throw Error(ExitCode::infrastructure, "capture failed: " + failure_);
  CaptureSummaryEvent event = capture_summary_event(*summary_, request_, stopped);
  summary_.reset();
  return event;
}

CaptureSummaryEvent AgentCapture::stop() {
  if (!active()) throw input_error("capture_stop: no capture is running; send capture_start first");
  const bool ended_by_itself = finished_.load();
  if (!ended_by_itself) run_->stop();
  return join(!ended_by_itself);
}

std::optional<CaptureSummaryEvent> AgentCapture::take_finished() {
  if (!active() || !finished_.load()) return std::nullopt;
  return join(false);
}

}  // namespace rocehil::agent
