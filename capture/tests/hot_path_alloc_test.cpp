// The per-frame path allocates nothing once its tables have room: this test counts every
// operator new in the process while a capture is read and analysed a second time.

#include <gtest/gtest.h>
#include <unistd.h>

#include "allocation_counter.hpp"

#include <array>
#include <vector>

#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"
#include "rocehil/capture/pcap_writer.hpp"
#include "rocehil/common/roce_wire.hpp"

using rocehil::testing::allocations;

namespace rocehil::capture {
namespace {

// MAC control frames from three senders: PFC XOFF and XON, 802.3x PAUSE and its XON, so that the
// pause state machines see every transition.
std::vector<std::uint8_t> mac_control_frame(std::size_t n) {
  const MacAddress sender{0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(0x10 + n % 3)};
  switch (n % 5) {
    case 0: return build_pfc(0b1000, {0, 0, 0, 100}, sender);
    case 1: return build_pfc(0b1000'1000, {0, 0, 0, 0xffff, 0, 0, 0, 7}, sender);
    case 2: return build_pfc(0b1000, {}, sender);
    case 3: return build_pause(0xffff, sender);
    default: return build_pause(0, sender);
  }
}

// A pcap of `frames` records over 64 flows, CNPs, ACKs and PFC mixed in, all within one second;
// `remote`: each frame as two spines' ERSPAN III sessions send it, time-stamped by the switch.
std::vector<std::uint8_t> sample_capture(std::size_t frames, bool remote = false) {
  std::vector<std::uint8_t> out;
  // A name of its own: ctest -j runs the two parameters at once.
  const std::string path = ::testing::TempDir() + "/hot_path_" + std::to_string(::getpid()) +
                           (remote ? "_remote" : "_local") + ".pcap";
  {
    PcapWriter w(path, FileFormat::pcap_ns, remote ? 256 : 128);
    RoceFrame f;
    f.payload_size = 1024;
    for (std::size_t i = 0; i < frames; ++i) {
      f.bth.dest_qp = static_cast<std::uint32_t>(i % 64);
      f.bth.psn = static_cast<std::uint32_t>(i / 64);
      f.ecn = i % 10 == 0 ? wire::ecn_ce : 0b10;
      std::vector<std::uint8_t> bytes = i % 97 == 0   ? mac_control_frame(i / 97)
                                        : i % 13 == 0 ? build(cnp_frame(f.dst, f.src, 7))
                                                      : build(f);
      const std::uint64_t ts = 1'000'000'000 + i * 100;
      if (remote) {
        MirrorWrap m;
        m.kind = MirrorKind::erspan3;
        m.src.bytes[15] = static_cast<std::uint8_t>(201 + i % 2);
        m.session_id = static_cast<std::uint16_t>(1 + i % 2);
        m.sequence = static_cast<std::uint32_t>(i / 2);
        m.timestamp = static_cast<std::uint32_t>(ts / 100);
        bytes = wrap_mirror(m, bytes);
      }
      w.write(ts, bytes);
    }
    w.close();
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  std::array<std::uint8_t, 65536> chunk;
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), file))
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
  std::fclose(file);
  std::remove(path.c_str());
  return out;
}

std::size_t analyse(Analyzer& analyzer, FileSource& source) {
  std::array<Frame, 256> batch;
  std::size_t frames = 0;
  while (const std::size_t n = source.next_batch(batch)) {
    analyzer.add(std::span<const Frame>(batch.data(), n));
    frames += n;
  }
  return frames;
}

class HotPath : public ::testing::TestWithParam<bool> {};

TEST_P(HotPath, ReadingAndAnalysingAllocateNothingOnceTablesHaveRoom) {
  const std::vector<std::uint8_t> capture = sample_capture(20'000, GetParam());
  AnalyzerOptions options;
  options.spine_macs = {MacAddress{0x02, 0, 0, 0, 0, 0x11}};
  Analyzer analyzer(options);
  auto warm_up = FileSource::from_memory(capture);
  ASSERT_EQ(analyse(analyzer, *warm_up), 20'000u);  // the flows, QPs and bins are known now

  auto again = FileSource::from_memory(capture);  // opening may allocate: not per frame
  const std::size_t before = allocations();
  const std::size_t frames = analyse(analyzer, *again);
  const std::size_t during = allocations() - before;
  EXPECT_EQ(frames, 20'000u);
  EXPECT_EQ(during, 0u) << "allocations while reading and analysing 20,000 frames";

  // The count is live: the test would see an allocation if the path made one.
  const std::size_t probe = allocations();
  // A direct call: new-expressions may be elided by the compiler, calls to operator new are not.
  ::operator delete(::operator new(16));
  EXPECT_EQ(allocations(), probe + 1);
  const Analysis a = analyzer.result();
  EXPECT_EQ(a.roce.packets, 2 * (20'000u - 20'000u / 97 - 1));
  // The pause path really ran: pauses on PFC and 802.3x, some of them from the spine's MAC.
  EXPECT_GT(a.pfc.priorities[3].paused_ns, 0);
  EXPECT_GT(a.pause_8023x.paused_ns, 0);
  EXPECT_GT(a.pfc.from_spine.frames, 0u);
  if (GetParam()) {
    EXPECT_EQ(a.mirror.frames, 2 * 20'000u);
    ASSERT_EQ(a.mirror.sessions.size(), 2u);
    EXPECT_EQ(a.mirror.sessions[0].switch_timed, 20'000u);  // half the frames, read twice
  }
}

INSTANTIATE_TEST_SUITE_P(LocalAndRemoteMirrors, HotPath, ::testing::Bool(),
                         [](const auto& test) { return test.param ? "erspan3" : "local"; });

}  // namespace
}  // namespace rocehil::capture
