// Remote mirrors through the Analyzer: a capture received as ERSPAN or GRE gives the RoCE, CNP,
// PFC and PAUSE figures of the same frames from a local mirror port; GRE sequence numbers tell
// the frames lost on the way; ERSPAN III timestamps time the frames; parts and workers fold to
// the one-pass result.

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "addresses.hpp"
#include "mirror_samples.hpp"
#include "mixed_capture.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/mirror_builder.hpp"

namespace rocehil::capture {
namespace {

using testing::Capture;
using testing::mixed_capture;
using testing::options;

// How each frame of a capture is sent as a mirror: its wrap (sequence numbers are set here), the
// capture time the collector gives it, whether it is lost on the way.
struct Sender {
  explicit Sender(
      std::function<MirrorWrap(std::size_t frame)> w,
      std::function<std::uint64_t(const Frame&)> at = [](const Frame& f) { return f.ts_ns; })
      : wrap(std::move(w)), capture_time(std::move(at)) {}
  std::function<MirrorWrap(std::size_t frame)> wrap;
  std::function<std::uint64_t(const Frame&)> capture_time;
  std::set<std::size_t> lost;
};

// `c`'s Ethernet frames as a collector receives them from the mirror sessions `sender` describes;
// other link types are kept as they were. Returns the capture and the unwrapped frames that got
// through, for comparison.
std::pair<Capture, Capture> send(const Capture& c, const Sender& sender) {
  Capture wrapped, through;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> next_sequence;  // per session
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    const Frame& f = c.frames[i];
    if (f.link_type != link_type::ethernet) {
      wrapped.add(std::vector<std::uint8_t>(f.data, f.data + f.caplen), f.ts_ns, 65535,
                  f.link_type);
      through.add(std::vector<std::uint8_t>(f.data, f.data + f.caplen), f.ts_ns, 65535,
                  f.link_type);
      continue;
    }
    MirrorWrap w = sender.wrap(i);
    const auto session = std::pair(w.src.bytes[15], std::uint32_t{w.session_id});
    w.sequence = next_sequence[session]++;
    if (sender.lost.count(i)) continue;
    // The frame as the local mirror had it (its bytes are whole: only caplen was cut).
    const std::vector<std::uint8_t> frame(f.data, f.data + f.wire_len);
    std::vector<std::uint8_t> bytes = wrap_mirror(w, frame);
    const std::uint32_t overhead = static_cast<std::uint32_t>(bytes.size() - frame.size());
    wrapped.add(std::move(bytes), sender.capture_time(f), overhead + f.caplen);
    through.add(frame, f.ts_ns, f.caplen);
  }
  return {std::move(wrapped), std::move(through)};
}

nlohmann::json analyse(const Capture& c, AnalyzerOptions o = options()) {
  Analyzer a(o);
  a.add(c.frames);
  return nlohmann::json::parse(to_json_text(a.result()));
}

// Everything but what only the tunnel changes: the bytes received and the mirror section.
nlohmann::json figures(nlohmann::json j) {
  j.erase("bytes");
  j.erase("mirror");
  j.erase("options");
  return j;
}

// A whole capture file's worth of buffers for the frames the tests build (Frame::data points
// into a Capture's deque, so frames are built into one and kept there).
Capture mixed() {
  return mixed_capture(5, 3000);
}

MirrorWrap erspan2_v4(std::size_t) {
  MirrorWrap w;
  w.session_id = 4;
  w.port_index = 17;
  return w;
}

TEST(MirrorAnalysis, EveryWrapGivesTheFiguresOfTheFramesUnwrapped) {
  const Capture c = mixed();
  const nlohmann::json plain = analyse(c);
  const std::uint64_t t0 = c.frames.front().ts_ns;
  std::vector<std::pair<const char*, Sender>> senders;
  senders.emplace_back("ERSPAN II over IPv4", Sender{erspan2_v4});
  senders.emplace_back("ERSPAN I", Sender{[](std::size_t) {
                         MirrorWrap w;
                         w.kind = MirrorKind::erspan1;
                         return w;
                       }});
  senders.emplace_back("GRE TEB over IPv6 with key, no sequence numbers", Sender{[](std::size_t) {
                         MirrorWrap w;
                         w.kind = MirrorKind::gre_teb;
                         w.src = testing::doc_v6(0x5e);
                         w.dst = testing::doc_v6(0xc0);
                         w.with_sequence = false;
                         w.with_key = true;
                         w.key = 77;
                         return w;
                       }});
  // ERSPAN III with IEEE 1588 time and the seconds in subheader 3, the frames captured up to
  // 40 us late at the collector: timed by the switch, the result is the local mirror's.
  std::mt19937 rng(9);
  Sender three{[&](std::size_t i) {
                 MirrorWrap w;
                 w.kind = MirrorKind::erspan3;
                 w.src = testing::doc_v6(0x5e);
                 w.dst = testing::doc_v6(0xc0);
                 w.granularity = TimestampGranularity::ieee1588;
                 w.platform_id = 3;
                 const std::uint64_t ts = c.frames[i].ts_ns;
                 w.seconds = static_cast<std::uint32_t>(ts / 1'000'000'000);
                 w.timestamp = static_cast<std::uint32_t>(ts % 1'000'000'000);
                 return w;
               },
               [&](const Frame& f) { return f.ts_ns + 1'000 + rng() % 40'000; }};
  senders.emplace_back("ERSPAN III over IPv6, switch-timed", three);
  for (const auto& [what, sender] : senders) {
    SCOPED_TRACE(what);
    const auto [wrapped, through] = send(c, sender);
    ASSERT_EQ(through.frames.size(), c.frames.size());
    const nlohmann::json j = analyse(wrapped);
    EXPECT_EQ(figures(j), figures(plain));
    const std::size_t ethernet =
        std::count_if(c.frames.begin(), c.frames.end(),
                      [](const Frame& f) { return f.link_type == link_type::ethernet; });
    EXPECT_EQ(j["mirror"]["frames"], ethernet);
    std::uint64_t mirrored = 0;  // the frames' own wire lengths, as the local mirror had them
    for (const Frame& f : c.frames) mirrored += f.link_type == link_type::ethernet ? f.wire_len : 0;
    EXPECT_EQ(j["mirror"]["mirrored_bytes"], mirrored);
    EXPECT_EQ(j["mirror"]["malformed"], 0);
    // Losses only where sequence numbers tell them; otherwise not measured: null, not 0.
    const bool sequenced = j["mirror"]["sessions"][0]["sequenced"] > 0;
    EXPECT_EQ(j["mirror"]["lost"], sequenced ? nlohmann::json(0) : nlohmann::json(nullptr));
    EXPECT_EQ(j["mirror"]["coverage"], sequenced ? nlohmann::json(1.0) : nlohmann::json(nullptr));
    ASSERT_EQ(j["mirror"]["sessions"].size(), 1u);
    EXPECT_EQ(j["mirror"]["sessions"][0]["frames"], ethernet);
    EXPECT_EQ(j["timeline"]["start_ns"], t0);
  }
}

TEST(MirrorAnalysis, SessionFieldsAreReported) {
  const Capture c = mixed();
  const auto [wrapped, through] = send(c, Sender{erspan2_v4});
  const nlohmann::json s = analyse(wrapped)["mirror"]["sessions"][0];
  EXPECT_EQ(s["kind"], "erspan2");
  EXPECT_EQ(s["source"], "198.19.1.201");
  EXPECT_EQ(s["collector"], "198.19.0.2");
  EXPECT_EQ(s["id"], 4);
  EXPECT_EQ(s["first_sequence"], 0);
  EXPECT_EQ(s["last_sequence"], s["sequenced"].get<std::uint64_t>() - 1);
  EXPECT_EQ(s["ports"],
            nlohmann::json::parse(R"([{"index": 17, "frames": )" + s["frames"].dump() + "}]"));
  EXPECT_EQ(s["timestamp_granularity"], nullptr);  // ERSPAN II has no timestamps
  EXPECT_EQ(s["clock_offset_ns"], nullptr);
  std::uint64_t bytes = 0;
  for (const Frame& f : wrapped.frames)
    bytes += f.link_type == link_type::ethernet ? f.wire_len : 0;
  EXPECT_EQ(s["bytes"], bytes);
}

TEST(MirrorAnalysis, SequenceGapsAreFramesLostOnTheWayAndLowerTheCoverage) {
  const Capture c = mixed();
  Sender sender{erspan2_v4};
  sender.lost = {10, 11, 12, 1500, 2999};
  const auto [wrapped, through] = send(c, sender);
  const nlohmann::json j = analyse(wrapped);
  // What got through is analysed as the same frames from a local mirror...
  EXPECT_EQ(figures(j), figures(analyse(through)));
  // ...and the way from the switch lost 4 (the last frame's loss shows in no gap: nothing after
  // it says it was sent).
  const nlohmann::json s = j["mirror"]["sessions"][0];
  EXPECT_EQ(s["lost"], 4);
  EXPECT_EQ(s["late"], 0);
  const double sequenced = s["sequenced"].get<double>();
  EXPECT_DOUBLE_EQ(s["coverage"].get<double>(), sequenced / (sequenced + 4));
  EXPECT_EQ(j["mirror"]["lost"], 4);
  EXPECT_DOUBLE_EQ(j["mirror"]["coverage"].get<double>(), sequenced / (sequenced + 4));
}

TEST(MirrorAnalysis, SessionsOfSeveralSwitchesAreKeptApart) {
  const Capture c = mixed();
  Sender sender{[](std::size_t i) {
    MirrorWrap w;
    w.session_id = static_cast<std::uint16_t>(1 + i % 2);
    w.src.bytes[15] = static_cast<std::uint8_t>(200 + i % 2);  // spine 1 and spine 2
    return w;
  }};
  sender.lost = {101, 103};  // spine 2's
  const auto [wrapped, through] = send(c, sender);
  const nlohmann::json sessions = analyse(wrapped)["mirror"]["sessions"];
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0]["source"], "198.19.1.200");
  EXPECT_EQ(sessions[0]["id"], 1);
  EXPECT_EQ(sessions[0]["lost"], 0);
  EXPECT_EQ(sessions[1]["source"], "198.19.1.201");
  EXPECT_EQ(sessions[1]["id"], 2);
  EXPECT_EQ(sessions[1]["lost"], 2);
}

TEST(MirrorAnalysis, AFarSwitchClockIsNotUsedAndSaidSo) {
  const Capture c = mixed();
  Sender sender{[&](std::size_t i) {
    MirrorWrap w;
    w.kind = MirrorKind::erspan3;
    w.granularity = TimestampGranularity::ns100;
    // The switch counts 100 ns units since it booted, 20 minutes ago.
    w.timestamp = static_cast<std::uint32_t>((c.frames[i].ts_ns - c.frames[0].ts_ns) / 100 +
                                             12'000'000'000ull);
    return w;
  }};
  const auto [wrapped, through] = send(c, sender);
  const nlohmann::json j = analyse(wrapped);
  EXPECT_EQ(figures(j), figures(analyse(c)));  // timed at capture, as the frames were
  const nlohmann::json s = j["mirror"]["sessions"][0];
  EXPECT_EQ(s["switch_timed"], 0);
  EXPECT_EQ(s["clock_too_far"], s["frames"]);

  AnalyzerOptions capture_clock = options();
  capture_clock.switch_timestamps = false;
  EXPECT_EQ(analyse(wrapped, capture_clock)["mirror"]["sessions"][0]["clock_too_far"], 0);
}

TEST(MirrorAnalysis, SwitchTimedFramesReportHowFarTheClocksWereApart) {
  const Capture c = mixed();
  Sender sender{[&](std::size_t i) {
                  MirrorWrap w;
                  w.kind = MirrorKind::erspan3;
                  w.granularity = TimestampGranularity::ns100;
                  w.timestamp = static_cast<std::uint32_t>(c.frames[i].ts_ns / 100);
                  return w;
                },
                [](const Frame& f) { return f.ts_ns / 100 * 100 + 2'500; }};
  const auto [wrapped, through] = send(c, sender);
  const nlohmann::json s = analyse(wrapped)["mirror"]["sessions"][0];
  EXPECT_EQ(s["switch_timed"], s["frames"]);
  EXPECT_EQ(s["timestamp_granularity"], "100ns");
  EXPECT_EQ(s["clock_offset_ns"]["min"], 2'500);
  EXPECT_EQ(s["clock_offset_ns"]["max"], 2'500);
}

// A session's frames are recognised by their headers after the first (mirror_template.hpp); a
// frame among them carrying a tunnel in its mirrored frame is still malformed, and not counted
// in the session.
TEST(MirrorAnalysis, ATunnelInsideASessionsFrameIsMalformedAndOutsideTheSession) {
  const Capture c = mixed();
  const auto [wrapped, through] = send(c, Sender{erspan2_v4});
  Capture with_nested;
  std::size_t ethernet = 0;
  for (std::size_t i = 0; i < wrapped.frames.size(); ++i) {
    const Frame& f = wrapped.frames[i];
    std::vector<std::uint8_t> bytes(f.data, f.data + f.wire_len);  // whole; f.caplen were kept
    ethernet += f.link_type == link_type::ethernet;
    if (i == 1000) {  // the session's own headers, twice
      ASSERT_EQ(f.link_type, link_type::ethernet);
      bytes = wrap_mirror(erspan2_v4(i), bytes);
      with_nested.add(std::move(bytes), f.ts_ns);
      continue;
    }
    with_nested.add(std::move(bytes), f.ts_ns, f.caplen, f.link_type);
  }
  const nlohmann::json j = analyse(with_nested)["mirror"];
  EXPECT_EQ(j["malformed"], 1);
  EXPECT_EQ(j["frames"], ethernet - 1);
  EXPECT_EQ(j["sessions"][0]["frames"], ethernet - 1);
  EXPECT_EQ(j["sessions"][0]["lost"], 1);  // its sequence number is inside the tunnel it carries
}

// Tunnel headers too long to be recognised by their bytes (IPv6 with 96 bytes of hop-by-hop
// options) are read field by field, frame after frame: the same figures.
TEST(MirrorAnalysis, SessionsWithLongHeadersAreReadFieldByField) {
  const Capture c = mixed();
  const auto [wrapped, through] = send(c, Sender{[](std::size_t) {
                                         MirrorWrap w;
                                         w.src = testing::doc_v6(0x5e);
                                         w.dst = testing::doc_v6(0xc0);
                                         return w;
                                       }});
  Capture long_headers;
  for (const Frame& f : wrapped.frames) {
    std::vector<std::uint8_t> bytes(f.data, f.data + f.wire_len);  // whole; f.caplen were kept
    const bool ethernet = f.link_type == link_type::ethernet;
    if (ethernet) bytes = testing::with_hop_by_hop(std::move(bytes), 96);
    long_headers.add(std::move(bytes), f.ts_ns, ethernet ? f.caplen + 96 : f.caplen, f.link_type);
  }
  const nlohmann::json j = analyse(long_headers);
  const nlohmann::json usual = analyse(wrapped);
  EXPECT_EQ(figures(j), figures(analyse(c)));
  EXPECT_EQ(j["mirror"]["frames"], usual["mirror"]["frames"]);
  EXPECT_EQ(j["mirror"]["mirrored_bytes"], usual["mirror"]["mirrored_bytes"]);
  EXPECT_EQ(j["mirror"]["sessions"][0]["sequenced"], usual["mirror"]["sessions"][0]["sequenced"]);
  EXPECT_EQ(j["mirror"]["sessions"][0]["lost"], 0);
}

using testing::one_pass;

// Parts of a file folded in order give the one-pass result, losses at the cuts included.
TEST(MirrorAnalysis, PartsFoldToTheOnePassResult) {
  const Capture c = mixed();
  Sender sender{[](std::size_t i) {
    MirrorWrap w;
    w.session_id = static_cast<std::uint16_t>(1 + i % 3);
    return w;
  }};
  sender.lost = {299, 300, 301, 302, 1000, 2000};
  const auto [wrapped, through] = send(c, sender);
  const std::string whole = one_pass(wrapped);
  for (const std::vector<std::size_t>& cuts :
       std::vector<std::vector<std::size_t>>{{1}, {297}, {298, 299}, {500, 1200, 2500}}) {
    std::vector<std::span<const Frame>> parts;
    std::size_t begin = 0;
    for (std::size_t end : cuts) {
      parts.push_back(std::span<const Frame>(wrapped.frames).subspan(begin, end - begin));
      begin = end;
    }
    parts.push_back(std::span<const Frame>(wrapped.frames).subspan(begin));
    Analyzer first(options());
    first.add(parts[0]);
    for (std::size_t p = 1; p < parts.size(); ++p) {
      Analyzer later(options(), Analyzer::LaterPart{wrapped.frames.front().ts_ns});
      later.add(parts[p]);
      const std::span<const Frame> part = parts[p];
      first.append(std::move(later), [&](const auto& sink) { sink(part); });
    }
    EXPECT_EQ(to_json_text(first.result()), whole) << "cut before " << cuts.front();
  }
}

// Live workers: each session's frames reach one worker (the kernel's fanout hashes the outer
// addresses); joined, they give the one-pass sessions.
TEST(MirrorAnalysis, WorkersWithASessionEachCombineToTheOnePassSessions) {
  const Capture c = mixed_capture(6, 3000, false);
  Sender sender{[](std::size_t i) {
    MirrorWrap w;
    w.session_id = static_cast<std::uint16_t>(1 + i % 2);
    w.src.bytes[15] = static_cast<std::uint8_t>(200 + i % 2);
    return w;
  }};
  sender.lost = {40, 41, 1001};
  const auto [wrapped, through] = send(c, sender);
  std::vector<std::unique_ptr<Analyzer>> workers;
  for (int k = 0; k < 2; ++k)
    workers.push_back(std::make_unique<Analyzer>(
        options(), Analyzer::LaterPart{wrapped.frames.front().ts_ns, true}));
  for (const Frame& f : wrapped.frames) {
    const bool second = f.link_type == link_type::ethernet && f.data[14 + 15] == 201;
    workers[second ? 1 : 0]->add(f);
  }
  const auto joined = Analyzer::combine(options(), workers);
  const auto sessions_of = [](const std::string& text) {
    return nlohmann::json::parse(text)["mirror"];
  };
  EXPECT_EQ(sessions_of(to_json_text(joined->result())), sessions_of(one_pass(wrapped)));
}

}  // namespace
}  // namespace rocehil::capture
