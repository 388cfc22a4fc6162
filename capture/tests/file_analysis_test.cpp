// analyze_file with several workers where the file fools the search for a part's start: the
// part before must notice and read on, and the result stay the one-thread result.

#include "rocehil/capture/file_analysis.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "no_more_threads.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/frame_builder.hpp"

namespace rocehil::capture {
namespace {

constexpr std::uint64_t t0_s = 1'700'000'000;

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// A little-endian microsecond pcap.
struct Pcap {
  std::vector<std::uint8_t> bytes;
  Pcap() {
    for (std::uint32_t v : {0xa1b2c3d4u, 0x00040002u, 0u, 0u, 262144u, 1u}) put32(bytes, v);
  }
  void record(std::uint32_t usec, const std::vector<std::uint8_t>& frame) {
    put32(bytes, t0_s);
    put32(bytes, usec);
    put32(bytes, static_cast<std::uint32_t>(frame.size()));
    put32(bytes, static_cast<std::uint32_t>(frame.size()));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
};

// Sixteen plausible record headers in a row, each with nothing captured: what the search for
// a part's start takes for records.
std::vector<std::uint8_t> fake_records() {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 16; ++i) {
    put32(out, t0_s);
    put32(out, 10);
    put32(out, 0);
    put32(out, 0);
  }
  return out;
}

class TempFile {
 public:
  explicit TempFile(const std::vector<std::uint8_t>& bytes) {
    char name[] = "/tmp/rocehil-file-analysis-XXXXXX";
    const int fd = ::mkstemp(name);
    path_ = name;
    ::close(fd);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::uint8_t> write_frame(std::uint32_t psn, std::uint32_t payload,
                                      std::uint8_t fill = 0) {
  RoceFrame f;
  f.bth.psn = psn;
  f.payload_size = payload;
  f.payload_fill = fill;
  return build(f);
}

TEST(FileAnalysis, APartStartGuessedInsideARecordIsCaughtAndReadOn) {
  Pcap pcap;
  for (std::uint32_t i = 0; i < 20; ++i) pcap.record(i, write_frame(i, 64));
  // One big frame whose payload holds a run of fake record headers, after the middle of the
  // file, where the second part's start is looked for: the search finds them first.
  const std::size_t big_at = pcap.bytes.size();
  std::vector<std::uint8_t> big = write_frame(20, 0);
  const std::size_t headers_end = big.size() - 4;  // the ICRC stays last
  const std::vector<std::uint8_t> fakes = fake_records();
  std::vector<std::uint8_t> payload(4000, 0xee);
  std::memcpy(payload.data() + 3000, fakes.data(), fakes.size());
  big.insert(big.begin() + static_cast<std::ptrdiff_t>(headers_end), payload.begin(),
             payload.end());
  pcap.record(20, big);
  for (std::uint32_t i = 21; i < 41; ++i) pcap.record(i, write_frame(i, 64));
  const TempFile file(pcap.bytes);
  const std::size_t fakes_at = big_at + 16 + headers_end + 3000;
  ASSERT_TRUE(std::equal(fakes.begin(), fakes.end(), pcap.bytes.begin() + fakes_at));
  ASSERT_LT(big_at + 100, pcap.bytes.size() / 2);
  ASSERT_GT(fakes_at, pcap.bytes.size() / 2);

  const FileAnalysis one = analyze_file(file.path(), {}, {.workers = 1});
  const FileAnalysis two = analyze_file(file.path(), {}, {.workers = 2, .min_part_bytes = 64});
  EXPECT_EQ(one.analysis.frames, 41u);
  EXPECT_TRUE(two.read_on) << "the guessed start at byte " << fakes_at << " is not a record";
  EXPECT_EQ(two.parts, 1u);
  EXPECT_EQ(two.records, one.records);
  EXPECT_EQ(to_json_text(two.analysis), to_json_text(one.analysis));
}

TEST(FileAnalysis, PartsThatStartAtRecordsAreTaken) {
  Pcap pcap;
  for (std::uint32_t i = 0; i < 200; ++i) pcap.record(i, write_frame(i, 64));
  const TempFile file(pcap.bytes);
  const FileAnalysis one = analyze_file(file.path(), {}, {.workers = 1});
  const FileAnalysis four = analyze_file(file.path(), {}, {.workers = 4, .min_part_bytes = 64});
  EXPECT_EQ(four.parts, 4u);
  EXPECT_FALSE(four.read_on);
  EXPECT_EQ(four.records, 200u);
  EXPECT_EQ(to_json_text(four.analysis), to_json_text(one.analysis));
}

TEST(FileAnalysis, ResendsAcrossEveryPartStartGiveTheOneThreadResult) {
  // 64 QPs in turn, each going back 3 PSNs every 5th round: resends cross all three starts.
  Pcap pcap;
  std::uint32_t usec = 0;
  for (std::uint32_t round = 0; round < 40; ++round) {
    for (std::uint32_t qp = 0; qp < 64; ++qp) {
      RoceFrame f;
      f.bth.dest_qp = 0x100 + qp;
      f.bth.psn = round % 5 == 4 ? round - 3 : round;
      f.payload_size = 64;
      pcap.record(usec++, build(f));
    }
  }
  const TempFile file(pcap.bytes);
  const FileAnalysis one = analyze_file(file.path(), {}, {.workers = 1});
  const FileAnalysis four = analyze_file(file.path(), {}, {.workers = 4, .min_part_bytes = 64});
  EXPECT_EQ(four.parts, 4u);
  EXPECT_GT(one.analysis.flows.at(0).stats.retransmits, 0u);
  EXPECT_EQ(to_json_text(four.analysis), to_json_text(one.analysis));
}

TEST(FileAnalysis, WorkersThatCannotBeStartedLeaveItToOneThread) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to become a user held to a thread limit";
  Pcap pcap;
  for (std::uint32_t i = 0; i < 200; ++i) pcap.record(i, write_frame(i, 64));
  const TempFile file(pcap.bytes);
  ASSERT_EQ(::chmod(file.path().c_str(), 0644), 0);  // for the unprivileged child
  const std::string want = to_json_text(analyze_file(file.path(), {}, {.workers = 1}).analysis);
  EXPECT_EXIT(
      {
        testing::no_more_threads();
        const FileAnalysis four =
            analyze_file(file.path(), {}, {.workers = 4, .min_part_bytes = 64});
        std::_Exit(to_json_text(four.analysis) != want ? 1 : four.parts != 1 ? 2 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(FileAnalysis, APsnStateTheReplayDoesNotConfirmIsDecidedByOnePass) {
  // Three parts of 20 equal records. QP 0x101's PSNs: 0 | 0xc00000, 0x400001 | 0x400002 (see
  // AnalyzerAppend.AStateOtherThanPredictedIsSaidAndSetRightInOrder): the third part's request
  // is in order after the second's, but a gap after the state append_later predicted (0).
  // QP 0x102 fills the parts.
  Pcap pcap;
  std::uint32_t usec = 0, filler_psn = 0;
  const auto send = [&](std::uint32_t qp, std::uint32_t psn) {
    RoceFrame f;
    f.bth.dest_qp = qp;
    f.bth.psn = psn;
    f.payload_size = 64;
    pcap.record(usec++, build(f));
  };
  const auto fill_to = [&](std::uint32_t records) {
    while (usec < records) send(0x102, filler_psn++);
  };
  fill_to(19);
  send(0x101, 0);
  send(0x101, 0xc00000);
  send(0x101, 0x400001);
  fill_to(40);
  send(0x101, 0x400002);
  fill_to(60);
  const TempFile file(pcap.bytes);

  const FileAnalysis one = analyze_file(file.path(), {}, {.workers = 1});
  const FileAnalysis three = analyze_file(file.path(), {}, {.workers = 3, .min_part_bytes = 64});
  EXPECT_EQ(three.parts, 1u);  // the folded parts were put aside
  EXPECT_EQ(to_json_text(three.analysis), to_json_text(one.analysis));
  const auto& flows = one.analysis.flows;
  const auto qp101 = std::find_if(flows.begin(), flows.end(),
                                  [](const auto& f) { return f.key.dest_qp == 0x101; });
  ASSERT_NE(qp101, flows.end());
  EXPECT_EQ(qp101->stats.retransmits, 1u);
  EXPECT_EQ(qp101->stats.psn_gaps, 1u);
}

}  // namespace
}  // namespace rocehil::capture
