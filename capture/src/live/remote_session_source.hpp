#pragma once

// A live source that hands on one remote mirror session's frames: the tunnel packets whose
// ERSPAN session ID (or GRE key) and source are the capture point's, and whose mirrored frame
// passes the capture's filter. The filter is the same BPF program a local capture gives the
// kernel, run here on the frame inside the tunnel (libpcap's pcap_offline_filter), so `roce`
// and `cnp-pfc` keep exactly what they keep on a local mirror port.

#include <memory>

#include "analysis/mirror_sessions.hpp"
#include "rocehil/capture/live_source.hpp"
#include "rocehil/capture/open_live_source.hpp"

namespace rocehil::capture {

class RemoteSessionSource final : public LiveSource {
 public:
  // Throws rocehil::Error when the filter does not compile.
  RemoteSessionSource(std::unique_ptr<LiveSource> tunnel_packets, const RemoteSessionSpec& session,
                      CaptureFilter filter);
  ~RemoteSessionSource() override;
  RemoteSessionSource(const RemoteSessionSource&) = delete;
  RemoteSessionSource& operator=(const RemoteSessionSource&) = delete;

  std::size_t next_batch(std::span<Frame> out) override;
  void stop() noexcept override;
  // The tunnel's source's counters, with `captured` the frames handed on and `lost_upstream`
  // the session's losses by its sequence numbers, over all its frames (the filter aside).
  CaptureCounters counters() override;
  const InterfaceInfo& interface_info() const noexcept override;
  bool replays_a_file() const noexcept override;
  bool thins_mirror_sessions() const noexcept override;

  // Whether `frame` is one this source hands on (for tests); counts the session's frames.
  bool takes(const Frame& frame);

 private:
  struct Filter;
  std::unique_ptr<LiveSource> source_;
  RemoteSessionSpec session_;
  std::unique_ptr<Filter> filter_;
  InterfaceInfo info_;
  std::uint64_t handed_on_ = 0;
  MirrorSessions sessions_;  // every frame of the session, before the filter
  MirrorHeader header_;
};

}  // namespace rocehil::capture
