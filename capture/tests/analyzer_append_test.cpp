// Analyzer::append: a capture cut into parts, each analysed apart and folded back in order, gives
// exactly what one analyzer fed every frame gives. Compared on the whole JSON text, so every
// field (flows, PSN judgements, CNPs per QP, pauses and storms, timeline) is covered.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "addresses.hpp"
#include "mixed_capture.hpp"
#include "no_more_threads.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

namespace op = wire::opcode;
using testing::Capture;
using testing::mixed_capture;
using testing::options;

using testing::one_pass;

// The capture's frames cut before each of `cuts` (ascending frame indices).
std::vector<std::span<const Frame>> cut_before(const Capture& c,
                                               const std::vector<std::size_t>& cuts) {
  std::vector<std::span<const Frame>> parts;
  std::size_t begin = 0;
  for (std::size_t end : cuts) {
    parts.push_back(std::span<const Frame>(c.frames).subspan(begin, end - begin));
    begin = end;
  }
  parts.push_back(std::span<const Frame>(c.frames).subspan(begin));
  return parts;
}

// Cuts the capture at `cuts` (ascending frame indices), analyses each part apart and folds them.
std::string in_parts(const Capture& c, const std::vector<std::size_t>& cuts, int* replays) {
  const std::vector<std::span<const Frame>> parts = cut_before(c, cuts);
  Analyzer first(options());
  first.add(parts[0]);
  for (std::size_t p = 1; p < parts.size(); ++p) {
    const std::span<const Frame> part = parts[p];
    Analyzer later(options(), Analyzer::LaterPart{c.frames.front().ts_ns});
    later.add(part);
    first.append(std::move(later), [&](const auto& sink) {
      ++*replays;
      // Frame by frame, as a file is read in batches: the sink may stop it at any frame.
      for (std::size_t i = 0; i < part.size() && sink(part.subspan(i, 1)); ++i) {
      }
    });
  }
  return to_json_text(first.result());
}

// As in_parts, but every part folded at once, as analyze_file does, on `threads` threads.
// Returns the JSON, or "" when fold() said a prediction failed.
std::string in_parts_folded(const Capture& c, const std::vector<std::size_t>& cuts,
                            unsigned threads, int* replays, unsigned shards = 0) {
  const std::vector<std::span<const Frame>> parts = cut_before(c, cuts);
  Analyzer first(options());
  first.add(parts[0]);
  std::deque<Analyzer> later;
  std::vector<Analyzer*> pointers;
  std::vector<Analyzer::Replay> again;
  std::atomic<int> replayed{0};
  for (std::size_t p = 1; p < parts.size(); ++p) {
    const std::span<const Frame> part = parts[p];
    later.emplace_back(options(), Analyzer::LaterPart{c.frames.front().ts_ns});
    later.back().add(part);
    pointers.push_back(&later.back());
    again.push_back([part, &replayed](const auto& sink) {
      ++replayed;
      for (std::size_t i = 0; i < part.size() && sink(part.subspan(i, 1)); ++i) {
      }
    });
  }
  const bool as_predicted = first.fold(pointers, again, threads, shards);
  *replays += replayed;
  return as_predicted ? to_json_text(first.result()) : std::string();
}

TEST(AnalyzerAppend, EveryCutOfASmallCaptureGivesTheOnePassResult) {
  const Capture c = mixed_capture(1, 400);
  const std::string want = one_pass(c);
  int replays = 0;
  for (std::size_t cut = 0; cut <= c.frames.size(); ++cut)
    ASSERT_EQ(in_parts(c, {cut}, &replays), want) << "cut before frame " << cut;
  // The go-back-N resends must have crossed some cuts, or the replay path went untested.
  EXPECT_GT(replays, 0);
}

TEST(AnalyzerAppend, ManyPartsOfLargerCaptures) {
  for (std::uint32_t seed = 2; seed < 8; ++seed) {
    const Capture c = mixed_capture(seed, 5000);
    const std::string want = one_pass(c);
    std::mt19937 rng(seed);
    int replays = 0;
    for (int parts : {2, 3, 4, 7, 16}) {
      std::vector<std::size_t> cuts;
      for (int i = 1; i < parts; ++i) cuts.push_back(rng() % (c.frames.size() + 1));
      std::sort(cuts.begin(), cuts.end());
      ASSERT_EQ(in_parts(c, cuts, &replays), want) << "seed " << seed << ", " << parts << " parts";
    }
  }
}

TEST(AnalyzerAppend, AllPartsFoldedAtOnceOnSeveralThreadsGiveTheOnePassResult) {
  int replays = 0;
  for (std::uint32_t seed = 2; seed < 8; ++seed) {
    const Capture c = mixed_capture(seed, 5000);
    const std::string want = one_pass(c);
    std::mt19937 rng(seed);
    for (int parts : {2, 3, 4, 7, 16}) {
      std::vector<std::size_t> cuts;
      for (int i = 1; i < parts; ++i) cuts.push_back(rng() % (c.frames.size() + 1));
      std::sort(cuts.begin(), cuts.end());
      for (const auto& [threads, shards] :
           {std::pair{1u, 1u}, {2u, 2u}, {3u, 4u}, {2u, 16u}, {16u, 0u}})
        ASSERT_EQ(in_parts_folded(c, cuts, threads, &replays, shards), want)
            << "seed " << seed << ", " << parts << " parts, " << threads << " threads, " << shards
            << " shards";
    }
  }
  EXPECT_GT(replays, 20);  // resends crossed many cuts, so the replays ran beside the merging
}

TEST(AnalyzerAppend, AFoldThatCanStartNoThreadGivesTheOnePassResult) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to become a user held to a thread limit";
  const Capture c = mixed_capture(3, 5000);
  const std::string want = one_pass(c);
  // In a child: every shard and every replay then runs on the calling thread.
  EXPECT_EXIT(
      {
        testing::no_more_threads();
        int replays = 0;
        const bool same = in_parts_folded(c, {900, 1800, 2700, 3600}, 4, &replays, 4) == want;
        std::_Exit(!same ? 1 : replays == 0 ? 2 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

// QP 0x101's PSNs go 0 | 0xc00000, 0x400001 across the cut: the first request after the cut is
// behind 0 (by 2^22), the next one ahead of 0 but behind 0xc00000 (by 2^23 - 1). One pass
// counts a resend, then a gap, and ends at 0x400001; the part alone ends at 0xc00000, so the
// replay never joins it and the state append_later predicted (0, nothing passed it) is wrong.
Capture psns_over_half_the_space() {
  Capture c;
  RoceFrame f;
  f.payload_size = 64;
  f.bth.dest_qp = 0x101;
  std::uint64_t ts = 1'000'000;
  for (std::uint32_t psn : {0u, 0xc00000u, 0x400001u, 0x400002u}) {
    f.bth.psn = psn;
    c.add(build(f), ts += 1000);
  }
  return c;
}

TEST(AnalyzerAppend, AStateOtherThanPredictedIsSaidAndSetRightInOrder) {
  const Capture c = psns_over_half_the_space();
  const std::string want = one_pass(c);
  int replays = 0;
  EXPECT_EQ(in_parts(c, {1}, &replays), want);  // append: set right before anything follows
  EXPECT_EQ(replays, 1);
  for (unsigned shards : {1u, 4u}) {
    EXPECT_EQ(in_parts_folded(c, {1}, 2, &replays, shards), "");  // folded at once: said
    // Another part after it would have been joined to the wrong state: said there too.
    EXPECT_EQ(in_parts_folded(c, {1, 3}, 2, &replays, shards), "");
  }

  // An ordinary resend across the cut is predicted.
  Capture resend;
  RoceFrame f;
  f.payload_size = 64;
  std::uint64_t ts = 1'000'000;
  for (std::uint32_t psn : {0u, 1u, 2u, 3u, 1u, 2u, 3u, 4u, 5u}) {
    f.bth.psn = psn;
    resend.add(build(f), ts += 1000);
  }
  EXPECT_EQ(in_parts_folded(resend, {4}, 2, &replays, 4), one_pass(resend));
}

TEST(AnalyzerAppend, AReplayStopsAfterTheLastPacketOfTheFlowsItFollows) {
  // QP 0x101 sends PSNs 0..9, resends 5..7 after the cut, then falls silent while QP 0x102
  // sends 1000 more. The resent flow never rejoins the part's judgements (its part never gets
  // back to PSN 9), so only its packet count can end its replay.
  Capture c;
  RoceFrame f;
  f.payload_size = 64;
  std::uint64_t ts = 1'000'000;
  const auto send = [&](std::uint32_t qp, std::uint32_t psn) {
    f.bth.dest_qp = qp;
    f.bth.psn = psn;
    c.add(build(f), ts += 1000);
  };
  for (std::uint32_t psn = 0; psn < 10; ++psn) send(0x101, psn);
  const std::size_t cut = c.frames.size();
  for (std::uint32_t psn = 5; psn < 8; ++psn) send(0x101, psn);
  for (std::uint32_t psn = 0; psn < 1000; ++psn) send(0x102, psn);

  const std::string want = one_pass(c);
  const std::span<const Frame> all(c.frames);
  Analyzer first(options());
  first.add(all.first(cut));
  Analyzer later(options(), Analyzer::LaterPart{c.frames.front().ts_ns});
  later.add(all.subspan(cut));
  std::size_t replayed = 0;
  first.append(std::move(later), [&](const auto& sink) {
    for (std::size_t i = cut; i < all.size(); ++i) {
      ++replayed;
      if (!sink(all.subspan(i, 1))) break;
    }
  });
  EXPECT_EQ(to_json_text(first.result()), want);
  EXPECT_EQ(replayed, 3u);  // the three resends, none of QP 0x102's frames
}

TEST(AnalyzerAppend, AStormSplitAcrossPartsIsOneStorm) {
  // One sender holds priority 3 in XOFF for 300 ms, refreshing every 100 us (each XOFF lasts
  // 335.5 us at 100G); both cuts land inside the pause, which must still be one storm of 300 ms,
  // not three of 100 ms each (no longer than storm_ms, so none at all).
  Capture c;
  std::array<std::uint16_t, 8> quanta{};
  quanta[3] = 0xffff;
  const std::uint64_t t0 = 1'000'000'000;
  for (int i = 0; i <= 3000; ++i) c.add(build_pfc(0x0008, quanta), t0 + i * 100'000ull);
  quanta[3] = 0;
  c.add(build_pfc(0x0008, quanta), t0 + 300'050'000ull);  // XON ends it
  AnalyzerOptions o;
  o.storm_ms = 100;
  Analyzer whole(o);
  whole.add(c.frames);
  const Analysis want = whole.result();
  ASSERT_EQ(want.pfc.storms.size(), 1u);
  EXPECT_NEAR(want.pfc.storms[0].duration_ns, 300'050'000.0, 1.0);

  const std::span<const Frame> all(c.frames);
  Analyzer first(o);
  first.add(all.first(1000));
  for (std::size_t at : {1000u, 2000u}) {
    Analyzer later(o, Analyzer::LaterPart{t0});
    later.add(all.subspan(at, at == 2000 ? all.size() - at : 1000));
    first.append(std::move(later), [](const auto&) { FAIL() << "no flow needs a replay"; });
  }
  const Analysis got = first.result();
  EXPECT_EQ(to_json_text(got), to_json_text(want));
  ASSERT_EQ(got.pfc.storms.size(), 1u);
  EXPECT_EQ(got.pfc.priorities[3].storms, 1u);
}

TEST(AnalyzerCombine, WorkersWithAShareOfTheConnectionsEachGiveTheOnePassResult) {
  // As PACKET_FANOUT or RSS spread a live capture: every frame of a connection to one worker,
  // frames of no connection (PFC, PAUSE, other link types) anywhere. Timestamps in order, as
  // one clock stamps them, so the replayed pauses meet the frames in the order one pass did.
  for (std::uint32_t seed = 11; seed < 14; ++seed) {
    const Capture c = mixed_capture(seed, 4000, false);
    const std::string want = one_pass(c);
    for (std::uint32_t n : {1u, 2u, 3u, 8u}) {
      std::vector<std::unique_ptr<Analyzer>> workers;
      for (std::uint32_t w = 0; w < n; ++w)
        workers.push_back(
            std::make_unique<Analyzer>(options(), Analyzer::LaterPart{c.frames.front().ts_ns}));
      for (std::size_t i = 0; i < c.frames.size(); ++i)
        workers[c.connection[i] % n]->add(c.frames[i]);
      const auto joined = Analyzer::combine(options(), workers);
      EXPECT_EQ(to_json_text(joined->result()), want) << "seed " << seed << ", " << n << " workers";
    }
  }
}

// PFC and 802.3x PAUSE frames: MAC control, EtherType 0x8808 (untagged in these captures).
bool mac_control(const Frame& f) {
  return f.link_type == link_type::ethernet && f.caplen >= 14 && f.data[12] == 0x88 &&
         f.data[13] == 0x08;
}

// Live workers (LaterPart::live_worker) fed as the kernel's fanout hash or RSS feed them: every
// frame of a connection to one worker, and every MAC control frame, having no IP header to
// hash, to one worker too, here `pauses_to(i)` for frame i.
std::unique_ptr<Analyzer> live_workers(const Capture& c, std::uint32_t n,
                                       const std::function<std::uint32_t(std::size_t)>& pauses_to) {
  std::vector<std::unique_ptr<Analyzer>> workers;
  for (std::uint32_t w = 0; w < n; ++w)
    workers.push_back(std::make_unique<Analyzer>(
        options(),
        Analyzer::LaterPart{.timeline_start_ns = c.frames.front().ts_ns, .live_worker = true}));
  for (std::size_t i = 0; i < c.frames.size(); ++i)
    workers[mac_control(c.frames[i]) ? pauses_to(i) : c.connection[i] % n]->add(c.frames[i]);
  return Analyzer::combine(options(), workers);
}

TEST(AnalyzerCombine, LiveWorkersAccountTheirOwnPausesAndGiveTheOnePassResult) {
  for (std::uint32_t seed = 21; seed < 24; ++seed) {
    const Capture c = mixed_capture(seed, 4000, false);
    const std::string want = one_pass(c);
    for (std::uint32_t n : {1u, 2u, 3u, 8u}) {
      const auto joined = live_workers(c, n, [n](std::size_t) { return n - 1; });
      EXPECT_EQ(to_json_text(joined->result()), want) << "seed " << seed << ", " << n << " workers";
    }
  }
}

// Equal but for the last bits of doubles (sums taken in another order).
void expect_near(const nlohmann::json& got, const nlohmann::json& want, const std::string& at) {
  ASSERT_EQ(got.type(), want.type()) << at;
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << at;
    for (const auto& [key, value] : want.items()) expect_near(got.at(key), value, at + "." + key);
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << at;
    for (std::size_t i = 0; i < want.size(); ++i)
      expect_near(got[i], want[i], at + "[" + std::to_string(i) + "]");
  } else if (want.is_number_float()) {
    EXPECT_NEAR(got.get<double>(), want.get<double>(), 1e-9 * std::abs(want.get<double>())) << at;
  } else {
    EXPECT_EQ(got, want) << at;
  }
}

TEST(AnalyzerCombine, LiveWorkersWithASenderEachAddTheirPauses) {
  // Were the pause frames hashed on their source MACs, each sender's would still all go to one
  // worker: its pauses are that worker's, and the workers' totals add up.
  const Capture c = mixed_capture(31, 4000, false);
  const nlohmann::json want = nlohmann::json::parse(one_pass(c));
  const auto joined = live_workers(c, 2, [&](std::size_t i) { return c.frames[i].data[11] % 2u; });
  const nlohmann::json got = nlohmann::json::parse(to_json_text(joined->result()));
  ASSERT_GT(want.at("pfc").at("storms").size(), 1u);
  expect_near(got, want, "");
}

TEST(AnalyzerCombine, TakesOnlyWorkersBuiltAsShares) {
  std::vector<std::unique_ptr<Analyzer>> workers;
  workers.push_back(std::make_unique<Analyzer>());
  EXPECT_THROW(Analyzer::combine({}, workers), std::logic_error);
}

TEST(AnalyzerAppend, OnlyTheFirstPartTakesLaterOnes) {
  Analyzer first;
  Analyzer later(AnalyzerOptions{}, Analyzer::LaterPart{0});
  Analyzer other;
  Analyzer live(AnalyzerOptions{},
                Analyzer::LaterPart{.timeline_start_ns = 0, .live_worker = true});
  EXPECT_THROW(later.append(std::move(first), {}), std::logic_error);
  EXPECT_THROW(first.append(std::move(other), {}), std::logic_error);
  EXPECT_THROW(first.append(std::move(live), {}), std::logic_error);  // kept no pause frames
}

}  // namespace
}  // namespace rocehil::capture
