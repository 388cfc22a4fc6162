// A remote capture point's source: one session's tunnel packets handed on, the capture filter
// applied to the frame inside the tunnel with the same BPF program a local capture gives the
// kernel.

#include "live/remote_session_source.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "addresses.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"

namespace rocehil::capture {
namespace {

using testing::v4;

// Hands out its frames in one batch, then ends as a stopped source does.
class FramesSource final : public LiveSource {
 public:
  void add(std::vector<std::uint8_t> bytes) {
    bytes_.push_back(std::move(bytes));
    Frame f;
    f.ts_ns = 1'700'000'000'000'000'000ull + frames_.size();
    f.caplen = f.wire_len = static_cast<std::uint32_t>(bytes_.back().size());
    f.data = bytes_.back().data();
    frames_.push_back(f);
  }
  std::size_t next_batch(std::span<Frame> out) override {
    const std::size_t n = std::min(out.size(), frames_.size() - at_);
    std::copy_n(frames_.begin() + static_cast<std::ptrdiff_t>(at_), n, out.begin());
    at_ += n;
    return n;
  }
  void stop() noexcept override {}
  CaptureCounters counters() override { return {.captured = at_, .dropped_buffer = 3}; }
  const InterfaceInfo& interface_info() const noexcept override { return info_; }

 private:
  std::deque<std::vector<std::uint8_t>> bytes_;
  std::vector<Frame> frames_;
  std::size_t at_ = 0;
  InterfaceInfo info_{.name = "eth9", .description = "test", .bpf_filter = "ip proto 47"};
};

MirrorWrap from(std::uint8_t spine, std::uint16_t session, std::uint32_t sequence) {
  MirrorWrap w;
  w.sequence = sequence;
  w.src = v4(198, 19, 1, static_cast<std::uint8_t>(200 + spine));
  w.session_id = session;
  return w;
}

// What the source hands on, as (spine, inner kind) per frame.
std::vector<std::string> taken(CaptureFilter filter, RemoteSessionSpec spec) {
  RoceFrame write;
  const auto roce = build(write);
  const auto cnp = build(cnp_frame(v4(198, 18, 0, 2), v4(198, 18, 0, 1), 7));
  const auto pfc = build_pfc(0x08, {0, 0, 0, 100, 0, 0, 0, 0});
  std::vector<std::uint8_t> arp_bytes(60, 0);
  arp_bytes[12] = 0x08;
  arp_bytes[13] = 0x06;
  const std::vector<std::uint8_t> arp = arp_bytes;
  auto source = std::make_unique<FramesSource>();
  std::vector<std::string> names;
  std::uint32_t sequence[3] = {0, 0, 0};  // per spine, and the GRE TEB mirror
  const auto add = [&](const std::string& name, std::vector<std::uint8_t> bytes) {
    source->add(std::move(bytes));
    names.push_back(name);
  };
  for (const std::uint8_t spine : {std::uint8_t{1}, std::uint8_t{2}}) {
    const std::string s = "s" + std::to_string(spine) + " ";
    for (const auto& [what, frame] : {std::pair{"roce", &roce}, std::pair{"cnp", &cnp},
                                      std::pair{"pfc", &pfc}, std::pair{"arp", &arp}})
      add(s + what, wrap_mirror(from(spine, spine, sequence[spine - 1]++), *frame));
  }
  MirrorWrap teb;
  teb.kind = MirrorKind::gre_teb;
  teb.with_key = true;
  teb.key = 2;
  teb.sequence = sequence[2]++;
  add("teb key 2 roce", wrap_mirror(teb, roce));
  add("local roce", roce);  // not a mirror at all
  auto broken = wrap_mirror(from(2, 2, sequence[1]++), roce);
  broken[14 + 20 + 8] = 0x70;  // ERSPAN version 7
  add("s2 broken", broken);

  RemoteSessionSource session(std::move(source), spec, filter);
  std::vector<Frame> out(64);
  std::vector<std::string> got;
  while (const std::size_t n = session.next_batch(out))
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < names.size(); ++k)
        if (out[i].ts_ns == 1'700'000'000'000'000'000ull + k) got.push_back(names[k]);
  EXPECT_EQ(session.counters().captured, got.size());
  EXPECT_EQ(session.counters().dropped_buffer, 3u);
  EXPECT_TRUE(session.counters().upstream_counted);
  EXPECT_EQ(session.thins_mirror_sessions(), filter != CaptureFilter::all);
  // Every frame of the session was numbered in turn, so the numbers the filter left out are
  // not losses.
  EXPECT_EQ(session.counters().lost_upstream, 0u);
  return got;
}

TEST(RemoteSessionSource, TakesItsSessionAndFiltersInsideTheTunnel) {
  RemoteSessionSpec two{.session = 2, .source = std::nullopt};
  EXPECT_EQ(taken(CaptureFilter::all, two),
            (std::vector<std::string>{"s2 roce", "s2 cnp", "s2 pfc", "s2 arp", "teb key 2 roce",
                                      "s2 broken"}));
  EXPECT_EQ(
      taken(CaptureFilter::roce, two),
      (std::vector<std::string>{"s2 roce", "s2 cnp", "s2 pfc", "teb key 2 roce", "s2 broken"}));
  EXPECT_EQ(taken(CaptureFilter::cnp_pfc, two),
            (std::vector<std::string>{"s2 cnp", "s2 pfc", "s2 broken"}));
  // With the switch's address too: the GRE TEB mirror from elsewhere is not this session's.
  RemoteSessionSpec from_s2{.session = 2, .source = v4(198, 19, 1, 202)};
  EXPECT_EQ(taken(CaptureFilter::roce, from_s2),
            (std::vector<std::string>{"s2 roce", "s2 cnp", "s2 pfc", "s2 broken"}));
  RemoteSessionSpec one{.session = 1, .source = std::nullopt};
  EXPECT_EQ(taken(CaptureFilter::cnp_pfc, one),
            (std::vector<std::string>{"s1 cnp", "s1 pfc", "s2 broken"}));
}

}  // namespace
}  // namespace rocehil::capture
