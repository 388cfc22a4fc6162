#include "rocehil/capture/pcap_writer.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include "format_param_name.hpp"

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "rocehil/capture/file_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

using Bytes = std::vector<std::uint8_t>;

std::string writer_temp_path(const std::string& name) {
  return ::testing::TempDir() + "rocehil_pw_" + std::to_string(::getpid()) + "_" + name;
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

Bytes written_payload(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed * 3 + i);
  return b;
}

std::uint32_t native32(const Bytes& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
std::uint16_t native16(const Bytes& b, std::size_t at) {
  std::uint16_t v;
  std::memcpy(&v, b.data() + at, 2);
  return v;
}

struct WrittenRecord {
  std::uint64_t ts_ns;
  std::uint32_t caplen;
  std::uint32_t wire_len;
  std::uint16_t link_type;
  Bytes data;
};

std::vector<WrittenRecord> read_back(const std::string& path, FileFormat expect_format) {
  auto src = FileSource::open(path);
  EXPECT_EQ(src->format(), expect_format);
  std::vector<WrittenRecord> out;
  std::vector<Frame> frames(16);
  while (const std::size_t n = src->next_batch(frames)) {
    for (std::size_t i = 0; i < n; ++i) {
      const Frame& f = frames[i];
      out.push_back(WrittenRecord{f.ts_ns, f.caplen, f.wire_len, f.link_type,
                                  Bytes(f.data, f.data + f.caplen)});
    }
  }
  EXPECT_TRUE(src->problems().empty());
  return out;
}

class PcapWriterRoundTrip : public ::testing::TestWithParam<FileFormat> {};

TEST_P(PcapWriterRoundTrip, FramesReadBackExactly) {
  const FileFormat format = GetParam();
  const std::string path = writer_temp_path(std::string("rt_") + to_string(format));
  const std::uint64_t t0 = 1700000000123456789ull;
  {
    PcapWriter w(path, format, 128);
    w.write(t0, written_payload(60, 1));
    w.write(t0 + 1, written_payload(1514, 2), 1518);  // cut to the snap length
    w.write(t0 + 999, written_payload(61, 3));        // odd lengths exercise pcapng padding
    w.write(t0 + 1000000000, written_payload(0, 0));
    w.write(0, written_payload(128, 4));
    w.close();
  }
  const auto got = read_back(path, format);
  ASSERT_EQ(got.size(), 5u);
  const auto ts = [&](std::uint64_t t) {
    return format == FileFormat::pcap_us ? t / 1000 * 1000 : t;
  };
  EXPECT_EQ(got[0].ts_ns, ts(t0));
  EXPECT_EQ(got[0].caplen, 60u);
  EXPECT_EQ(got[0].wire_len, 60u);
  EXPECT_EQ(got[0].link_type, link_type::ethernet);
  EXPECT_EQ(got[0].data, written_payload(60, 1));
  EXPECT_EQ(got[1].ts_ns, ts(t0 + 1));
  EXPECT_EQ(got[1].caplen, 128u);
  EXPECT_EQ(got[1].wire_len, 1518u);
  const Bytes second = written_payload(1514, 2);
  EXPECT_EQ(got[1].data, Bytes(second.begin(), second.begin() + 128));
  EXPECT_EQ(got[2].ts_ns, ts(t0 + 999));
  EXPECT_EQ(got[2].data, written_payload(61, 3));
  EXPECT_EQ(got[3].ts_ns, ts(t0 + 1000000000));
  EXPECT_EQ(got[3].caplen, 0u);
  EXPECT_EQ(got[4].ts_ns, 0u);
  EXPECT_EQ(got[4].data, written_payload(128, 4));
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Formats, PcapWriterRoundTrip,
                         ::testing::Values(FileFormat::pcap_us, FileFormat::pcap_ns,
                                           FileFormat::pcapng),
                         rocehil::capture::testing::format_param_name);

TEST(PcapWriter, PcapHeaderAndRecordBytes) {
  const std::string path = writer_temp_path("bytes.pcap");
  {
    PcapWriter w(path, FileFormat::pcap_us, 1000);
    w.write(3000000005999ull, written_payload(5, 7), 64);
    w.close();
  }
  const Bytes f = slurp(path);
  ASSERT_EQ(f.size(), 24u + 16u + 5u);
  EXPECT_EQ(native32(f, 0), 0xa1b2c3d4u);
  EXPECT_EQ(native16(f, 4), 2);
  EXPECT_EQ(native16(f, 6), 4);
  EXPECT_EQ(native32(f, 8), 0u);
  EXPECT_EQ(native32(f, 12), 0u);
  EXPECT_EQ(native32(f, 16), 1000u);
  EXPECT_EQ(native32(f, 20), 1u);
  EXPECT_EQ(native32(f, 24), 3000u);  // seconds
  EXPECT_EQ(native32(f, 28), 5u);     // microseconds, truncated
  EXPECT_EQ(native32(f, 32), 5u);
  EXPECT_EQ(native32(f, 36), 64u);
  EXPECT_EQ(Bytes(f.begin() + 40, f.end()), written_payload(5, 7));
  std::remove(path.c_str());
}

TEST(PcapWriter, NanosecondMagic) {
  const std::string path = writer_temp_path("ns.pcap");
  {
    PcapWriter w(path, FileFormat::pcap_ns);
    w.write(3000000005999ull, written_payload(1, 0));
    w.close();
  }
  const Bytes f = slurp(path);
  ASSERT_EQ(f.size(), 24u + 16u + 1u);
  EXPECT_EQ(native32(f, 0), 0xa1b23c4du);
  EXPECT_EQ(native32(f, 16), 262144u);
  EXPECT_EQ(native32(f, 28), 5999u);
  std::remove(path.c_str());
}

TEST(PcapWriter, PcapngBlocksArePaddedAndSelfConsistent) {
  const std::string path = writer_temp_path("bytes.pcapng");
  {
    PcapWriter w(path, FileFormat::pcapng, 9000);
    w.write((std::uint64_t{5} << 32) + 7, written_payload(5, 1), 70);
    w.write(8, written_payload(8, 2));
    w.close();
  }
  const Bytes f = slurp(path);
  ASSERT_EQ(f.size(), 28u + 32u + 40u + 40u);
  // SHB
  EXPECT_EQ(native32(f, 0), 0x0A0D0D0Au);
  EXPECT_EQ(native32(f, 4), 28u);
  EXPECT_EQ(native32(f, 8), 0x1A2B3C4Du);
  EXPECT_EQ(native16(f, 12), 1);
  EXPECT_EQ(native16(f, 14), 0);
  EXPECT_EQ(native32(f, 16), 0xffffffffu);
  EXPECT_EQ(native32(f, 24), 28u);
  // IDB: Ethernet, snap length, if_tsresol = 9, end of options.
  EXPECT_EQ(native32(f, 28), 1u);
  EXPECT_EQ(native32(f, 32), 32u);
  EXPECT_EQ(native16(f, 36), 1);
  EXPECT_EQ(native32(f, 40), 9000u);
  EXPECT_EQ(native16(f, 44), 9);
  EXPECT_EQ(native16(f, 46), 1);
  EXPECT_EQ(f[48], 9);
  EXPECT_EQ(native32(f, 52), 0u);
  EXPECT_EQ(native32(f, 56), 32u);
  // First EPB: 5 data bytes padded to 8.
  EXPECT_EQ(native32(f, 60), 6u);
  EXPECT_EQ(native32(f, 64), 40u);
  EXPECT_EQ(native32(f, 68), 0u);
  EXPECT_EQ(native32(f, 72), 5u);
  EXPECT_EQ(native32(f, 76), 7u);
  EXPECT_EQ(native32(f, 80), 5u);
  EXPECT_EQ(native32(f, 84), 70u);
  EXPECT_EQ(Bytes(f.begin() + 88, f.begin() + 93), written_payload(5, 1));
  EXPECT_EQ(Bytes(f.begin() + 93, f.begin() + 96), Bytes(3, 0));
  EXPECT_EQ(native32(f, 96), 40u);
  // Second EPB: 8 data bytes need no padding.
  EXPECT_EQ(native32(f, 100), 6u);
  EXPECT_EQ(native32(f, 104), 40u);
  EXPECT_EQ(native32(f, 136), 40u);
  std::remove(path.c_str());
}

// Walks a pcapng block's options from `at` (the first option) and returns code -> value.
std::map<std::uint16_t, Bytes> options_of(const Bytes& f, std::size_t at, std::size_t end) {
  std::map<std::uint16_t, Bytes> out;
  while (at + 4 <= end) {
    const std::uint16_t code = native16(f, at);
    const std::uint16_t len = native16(f, at + 2);
    if (code == 0) break;
    out[code] =
        Bytes(f.begin() + static_cast<long>(at + 4), f.begin() + static_cast<long>(at + 4 + len));
    at += 4 + ((len + 3u) & ~3u);
  }
  return out;
}

Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

Bytes u64(std::uint64_t v) {
  Bytes b(8);
  std::memcpy(b.data(), &v, 8);
  return b;
}

TEST(PcapWriter, PcapngNamesTheCapturePointAndRecordsItsLosses) {
  const std::string path = writer_temp_path("idb.pcapng");
  {
    PcapWriter w(path, FileFormat::pcapng, 128,
                 {.name = "rocehil-t-m1",
                  .description = "rocehil pcap",
                  .bpf_filter = "ether proto 0x8808",
                  .speed_bps = 100'000'000'000});
    w.write(1000, written_payload(60, 3));
    w.write_statistics({.captured = 1, .dropped_buffer = 7, .dropped_interface = 2},
                       (std::uint64_t{3} << 32) + 5, (std::uint64_t{4} << 32) + 6);
    w.close();
  }
  const Bytes f = slurp(path);
  // IDB after the 28-byte SHB.
  ASSERT_EQ(native32(f, 28), 1u);
  const std::uint32_t idb_len = native32(f, 32);
  EXPECT_EQ(native32(f, 28 + idb_len - 4), idb_len);
  auto idb = options_of(f, 28 + 16, 28 + idb_len - 4);
  EXPECT_EQ(idb[2], text("rocehil-t-m1"));
  EXPECT_EQ(idb[3], text("rocehil pcap"));
  EXPECT_EQ(idb[8], u64(100'000'000'000));
  EXPECT_EQ(idb[9], Bytes{9});
  EXPECT_EQ(idb[11], text(std::string(1, '\0') + "ether proto 0x8808"));
  // The frame reads back: readers skip the options and the statistics block.
  auto src = FileSource::open(path);
  std::vector<Frame> frames(4);
  ASSERT_EQ(src->next_batch(frames), 1u);
  EXPECT_EQ(frames[0].ts_ns, 1000u);
  EXPECT_EQ(src->next_batch(frames), 0u);
  EXPECT_TRUE(src->problems().empty());
  // ISB last: interface 0, the end time as the block timestamp, then the counters.
  const std::size_t isb = f.size() - native32(f, f.size() - 4);
  ASSERT_EQ(native32(f, isb), 5u);
  EXPECT_EQ(native32(f, isb + 8), 0u);
  EXPECT_EQ(native32(f, isb + 12), 4u);
  EXPECT_EQ(native32(f, isb + 16), 6u);
  auto isb_options = options_of(f, isb + 20, f.size() - 4);
  const std::uint32_t start_words[2] = {3, 5};
  EXPECT_EQ(isb_options[2], Bytes(reinterpret_cast<const std::uint8_t*>(start_words),
                                  reinterpret_cast<const std::uint8_t*>(start_words) + 8));
  EXPECT_EQ(isb_options[4], u64(10));  // ifrecv = captured + dropped
  EXPECT_EQ(isb_options[5], u64(2));   // ifdrop
  EXPECT_EQ(isb_options[7], u64(7));   // osdrop
  EXPECT_EQ(isb_options[8], u64(1));   // usrdeliv
  std::remove(path.c_str());
}

TEST(PcapWriter, DestructorFlushesWithoutClose) {
  const std::string path = writer_temp_path("noclose.pcap");
  {
    PcapWriter w(path, FileFormat::pcap_ns);
    w.write(1, written_payload(10, 1));
  }
  const auto got = read_back(path, FileFormat::pcap_ns);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, written_payload(10, 1));
  std::remove(path.c_str());
}

TEST(PcapWriter, CloseTwiceAndWriteAfterCloseAreHarmless) {
  const std::string path = writer_temp_path("twice.pcap");
  PcapWriter w(path, FileFormat::pcap_us);
  w.write(1, written_payload(10, 1));
  w.close();
  w.write(2, written_payload(10, 2));
  EXPECT_NO_THROW(w.close());
  EXPECT_EQ(slurp(path).size(), 24u + 16u + 10u);
  std::remove(path.c_str());
}

TEST(PcapWriter, FullDiskIsReportedByClose) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full is not available";
  PcapWriter w("/dev/full", FileFormat::pcapng);
  for (int i = 0; i < 2000; ++i) w.write(static_cast<std::uint64_t>(i), written_payload(1500, 1));
  try {
    w.close();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_EQ(e.code(), ENOSPC);
    EXPECT_EQ(std::string(e.what()),
              std::string("/dev/full: writing the capture file failed: ") + std::strerror(ENOSPC));
  }
}

TEST(PcapWriter, FullDiskWithoutCloseDoesNotThrow) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "/dev/full is not available";
  EXPECT_NO_THROW({
    PcapWriter w("/dev/full", FileFormat::pcap_us);
    w.write(1, written_payload(100, 1));
  });
}

TEST(PcapWriter, UncreatablePathNamesIt) {
  const std::string path = writer_temp_path("no/such/dir/out.pcap");
  try {
    PcapWriter w(path, FileFormat::pcap_us);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot create the capture file: " + std::strerror(ENOENT));
  }
}

}  // namespace
}  // namespace rocehil::capture
