#include "rocehil/capture/file_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "format_param_name.hpp"

#include <algorithm>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "files/byte_window.hpp"
#include "rocehil/capture/pcap_writer.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Builds capture files byte by byte in either byte order, so the tests do not depend on the
// writer they also test.
class Builder {
 public:
  explicit Builder(bool big = false) : big_(big) {}
  Builder& order(bool big) {
    big_ = big;
    return *this;
  }
  Builder& u8(std::uint8_t v) {
    bytes.push_back(v);
    return *this;
  }
  Builder& u16(std::uint16_t v) { return put(v, 2); }
  Builder& u32(std::uint32_t v) { return put(v, 4); }
  Builder& u64(std::uint64_t v) { return put(v, 8); }
  Builder& raw(const Bytes& b) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return *this;
  }
  Builder& pad4() {
    while (bytes.size() % 4 != 0) bytes.push_back(0);
    return *this;
  }

  // pcap
  Builder& pcap_header(std::uint32_t magic, std::uint32_t snaplen = 65535,
                       std::uint32_t linktype = 1) {
    return u32(magic).u16(2).u16(4).u32(0).u32(0).u32(snaplen).u32(linktype);
  }
  Builder& pcap_record(std::uint32_t sec, std::uint32_t frac, const Bytes& data,
                       std::uint32_t orig = 0) {
    return u32(sec)
        .u32(frac)
        .u32(static_cast<std::uint32_t>(data.size()))
        .u32(orig ? orig : static_cast<std::uint32_t>(data.size()))
        .raw(data);
  }

  // pcapng: `body` is everything between the length and the trailing length copy.
  Builder& block(std::uint32_t type, const Bytes& body) {
    const auto len = static_cast<std::uint32_t>(12 + (body.size() + 3) / 4 * 4);
    u32(type).u32(len).raw(body).pad4();
    return u32(len);
  }
  Builder& shb() {
    Builder b(big_);
    b.u32(0x1A2B3C4D).u16(1).u16(0).u64(~std::uint64_t{0});
    return block(0x0A0D0D0A, b.bytes);
  }
  // tsresol < 0 means no if_tsresol option.
  Builder& idb(std::uint16_t linktype = 1, std::uint32_t snaplen = 0, int tsresol = -1,
               std::int64_t tsoffset = 0) {
    Builder b(big_);
    b.u16(linktype).u16(0).u32(snaplen);
    if (tsresol >= 0) b.u16(9).u16(1).u8(static_cast<std::uint8_t>(tsresol)).pad4();
    if (tsoffset != 0) b.u16(14).u16(8).u64(static_cast<std::uint64_t>(tsoffset));
    b.u16(0).u16(0);
    return block(1, b.bytes);
  }
  Builder& epb(std::uint32_t ifid, std::uint64_t ts, const Bytes& data, std::uint32_t orig = 0) {
    Builder b(big_);
    b.u32(ifid)
        .u32(static_cast<std::uint32_t>(ts >> 32))
        .u32(static_cast<std::uint32_t>(ts))
        .u32(static_cast<std::uint32_t>(data.size()))
        .u32(orig ? orig : static_cast<std::uint32_t>(data.size()))
        .raw(data)
        .pad4();
    return block(6, b.bytes);
  }
  Builder& spb(std::uint32_t orig, const Bytes& data) {
    Builder b(big_);
    b.u32(orig).raw(data).pad4();
    return block(3, b.bytes);
  }
  Builder& pb(std::uint16_t ifid, std::uint64_t ts, const Bytes& data) {
    Builder b(big_);
    b.u16(ifid)
        .u16(0)
        .u32(static_cast<std::uint32_t>(ts >> 32))
        .u32(static_cast<std::uint32_t>(ts))
        .u32(static_cast<std::uint32_t>(data.size()))
        .u32(static_cast<std::uint32_t>(data.size()))
        .raw(data)
        .pad4();
    return block(2, b.bytes);
  }

  Bytes bytes;

 private:
  Builder& put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) {
      const int shift = big_ ? 8 * (n - 1 - i) : 8 * i;
      bytes.push_back(static_cast<std::uint8_t>(v >> shift));
    }
    return *this;
  }
  bool big_;
};

Bytes payload(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7);
  return b;
}

struct Got {
  std::uint64_t ts_ns;
  std::uint32_t caplen;
  std::uint32_t wire_len;
  std::uint16_t link_type;
  Bytes data;
  std::uint32_t interface = 0;
};

// Copies every frame out before the next batch, as the interface requires, and checks that
// every frame of a batch is still readable when the batch is complete.
std::vector<Got> read_all(FileSource& src, std::size_t batch = 256) {
  std::vector<Got> out;
  std::vector<Frame> frames(batch);
  for (;;) {
    const std::size_t n = src.next_batch(frames);
    if (n == 0) break;
    EXPECT_LE(n, batch);
    for (std::size_t i = 0; i < n; ++i) {
      const Frame& f = frames[i];
      out.push_back(Got{f.ts_ns, f.caplen, f.wire_len, f.link_type,
                        Bytes(f.data, f.data + f.caplen), f.interface});
    }
  }
  // Exhausted sources stay exhausted.
  EXPECT_EQ(src.next_batch(frames), 0u);
  return out;
}

std::vector<Got> read_memory(const Bytes& file, std::unique_ptr<FileSource>* keep = nullptr) {
  auto src = FileSource::from_memory(file, "test.pcap");
  auto frames = read_all(*src);
  if (keep) *keep = std::move(src);
  return frames;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "rocehil_fs_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good());
}

std::string open_error_text(const std::string& path) {
  try {
    FileSource::open(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- pcap -----------------------------------------------------------------------------------

TEST(FileSourcePcap, LittleEndianMicroseconds) {
  Builder b;
  b.pcap_header(0xa1b2c3d4).pcap_record(1700000000, 123456, payload(60, 1), 64);
  b.pcap_record(1700000001, 999999, payload(1514, 2));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_EQ(src->format(), FileFormat::pcap_us);
  EXPECT_EQ(src->records(), 2u);
  EXPECT_TRUE(src->problems().empty());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ts_ns, 1700000000123456000u);
  EXPECT_EQ(got[0].caplen, 60u);
  EXPECT_EQ(got[0].wire_len, 64u);
  EXPECT_EQ(got[0].link_type, 1);
  EXPECT_EQ(got[0].data, payload(60, 1));
  EXPECT_EQ(got[1].ts_ns, 1700000001999999000u);
  EXPECT_EQ(got[1].caplen, 1514u);
  EXPECT_EQ(got[1].wire_len, 1514u);
  EXPECT_EQ(got[1].data, payload(1514, 2));
}

TEST(FileSourcePcap, BigEndianNanosecondsAndFcsBitsInLinkType) {
  // Link type field: LINKTYPE_ETHERNET with the "FCS present, 4 bytes" bits above it.
  Builder b(true);
  b.pcap_header(0xa1b23c4d, 65535, 0x14000000u | 1u);
  b.pcap_record(1, 5, payload(42, 3), 1000);
  b.pcap_record(2, 999999999, payload(0, 0));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_EQ(src->format(), FileFormat::pcap_ns);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ts_ns, 1000000005u);
  EXPECT_EQ(got[0].caplen, 42u);
  EXPECT_EQ(got[0].wire_len, 1000u);
  EXPECT_EQ(got[0].link_type, 1);
  EXPECT_EQ(got[0].data, payload(42, 3));
  EXPECT_EQ(got[1].ts_ns, 2999999999u);
  EXPECT_EQ(got[1].caplen, 0u);
}

TEST(FileSourcePcap, BigEndianMicroseconds) {
  Builder b(true);
  b.pcap_header(0xa1b2c3d4, 128, 228).pcap_record(10, 20, payload(100, 4));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_EQ(src->format(), FileFormat::pcap_us);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ts_ns, 10000020000u);
  EXPECT_EQ(got[0].link_type, 228);
  EXPECT_EQ(got[0].data, payload(100, 4));
}

TEST(FileSourcePcap, CaplenAboveOriginalLengthRaisesWireLen) {
  Builder b;
  b.pcap_header(0xa1b2c3d4).pcap_record(0, 0, payload(100, 5), 60);
  const auto got = read_memory(b.bytes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].caplen, 100u);
  EXPECT_EQ(got[0].wire_len, 100u);
}

TEST(FileSourcePcap, CaplenAboveSnaplenWithinLimitIsTolerated) {
  Builder b;
  b.pcap_header(0xa1b2c3d4, 64).pcap_record(0, 0, payload(1500, 5));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].caplen, 1500u);
  EXPECT_TRUE(src->problems().empty());
}

TEST(FileSourcePcap, TruncatedLastRecordKeepsEarlierFrames) {
  Builder b;
  b.pcap_header(0xa1b2c3d4).pcap_record(1, 0, payload(100, 1)).pcap_record(2, 0, payload(100, 2));
  b.bytes.resize(b.bytes.size() - 30);  // the second record loses 30 of its 100 data bytes
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, payload(100, 1));
  ASSERT_EQ(src->problems().size(), 1u);
  const FileProblem& p = src->problems()[0];
  EXPECT_EQ(p.kind, FileProblem::Kind::truncated);
  EXPECT_EQ(p.offset, 24u + 116u);
  EXPECT_EQ(p.record, 2u);
  EXPECT_EQ(p.detail, "record 2 at byte 140: the file ends inside the record (86 of 116 bytes)");
  EXPECT_EQ(src->records(), 1u);
}

TEST(FileSourcePcap, TruncatedInsideRecordHeader) {
  Builder b;
  b.pcap_header(0xa1b2c3d4).pcap_record(1, 0, payload(10, 1)).u32(7);
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(src->problems().size(), 1u);
  EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::truncated);
  EXPECT_EQ(src->problems()[0].detail,
            "record 2 at byte 50: the file ends inside the record header (4 of 16 bytes)");
}

TEST(FileSourcePcap, CaplenBeyondLimitIsCorrupt) {
  Builder b;
  b.pcap_header(0xa1b2c3d4).pcap_record(1, 0, payload(10, 1));
  b.u32(2).u32(0).u32(300000).u32(300000).raw(payload(64, 0));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(src->problems().size(), 1u);
  const FileProblem& p = src->problems()[0];
  EXPECT_EQ(p.kind, FileProblem::Kind::corrupt);
  EXPECT_EQ(p.offset, 50u);
  EXPECT_EQ(p.record, 2u);
  EXPECT_EQ(p.detail, "record 2 at byte 50: captured length 300000 exceeds 262144");
}

TEST(FileSourcePcap, HeaderOnlyFileHasNoFramesAndNoProblems) {
  Builder b;
  b.pcap_header(0xa1b2c3d4);
  std::unique_ptr<FileSource> src;
  EXPECT_TRUE(read_memory(b.bytes, &src).empty());
  EXPECT_TRUE(src->problems().empty());
}

// ---- open errors ----------------------------------------------------------------------------

TEST(FileSourceOpen, EmptyFile) {
  const std::string path = temp_path("empty.pcap");
  write_file(path, {});
  try {
    FileSource::open(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": the file is empty; a capture holds at least a pcap or pcapng header (was the "
                  "capture stopped before it wrote anything?)");
  }
  std::remove(path.c_str());
  EXPECT_THROW(FileSource::from_memory({}), Error);
}

TEST(FileSourceOpen, UnknownMagic) {
  const std::string path = temp_path("elf.bin");
  write_file(path,
             {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(open_error_text(path),
            path +
                ": not a pcap or pcapng file (first 4 bytes 0x7f454c46); rocehil analyze "
                "reads pcap and pcapng captures");
  std::remove(path.c_str());
}

TEST(FileSourceOpen, ShorterThanHeader) {
  Builder b;
  b.pcap_header(0xa1b2c3d4);
  b.bytes.resize(10);
  try {
    FileSource::from_memory(b.bytes, "short.pcap");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(std::string(e.what()),
              "short.pcap: the file ends inside the pcap file header (10 of 24 bytes); the "
              "capture was cut off before its first packet");
  }
  const Bytes three = {0xd4, 0xc3, 0xb2};
  EXPECT_THROW(FileSource::from_memory(three), Error);

  Builder ng;
  ng.shb();
  ng.bytes.resize(20);
  try {
    FileSource::from_memory(ng.bytes, "short.pcapng");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "short.pcapng: not a readable pcapng file: block at byte 0 (section header "
              "block): the file ends inside the block (20 of 28 bytes)");
  }
}

TEST(FileSourceOpen, MissingFileNamesThePath) {
  const std::string path = temp_path("does-not-exist.pcap");
  try {
    FileSource::open(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot open: No such file or directory; check the path");
  }
}

TEST(FileSourceOpen, DirectoryIsBadInput) {
  try {
    FileSource::open(::testing::TempDir());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_EQ(e.code(), EISDIR);
  }
}

TEST(FileSourceOpen, PcapngWithBadByteOrderMagic) {
  Builder b;
  b.shb();
  b.bytes[8] = 0x11;
  EXPECT_THROW(FileSource::from_memory(b.bytes), Error);
}

// ---- pcapng ---------------------------------------------------------------------------------

TEST(FileSourcePcapng, LittleEndianDefaultResolution) {
  Builder b;
  b.shb().idb(1, 0).epb(0, 1700000000123456ull, payload(60, 9), 70);
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_EQ(src->format(), FileFormat::pcapng);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ts_ns, 1700000000123456000u);
  EXPECT_EQ(got[0].caplen, 60u);
  EXPECT_EQ(got[0].wire_len, 70u);
  EXPECT_EQ(got[0].data, payload(60, 9));
  EXPECT_TRUE(src->problems().empty());
}

TEST(FileSourcePcapng, BigEndianSection) {
  Builder b(true);
  b.shb().idb(1, 0, 9).epb(0, 1700000000123456789ull, payload(61, 3));
  const auto got = read_memory(b.bytes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ts_ns, 1700000000123456789u);
  EXPECT_EQ(got[0].caplen, 61u);
  EXPECT_EQ(got[0].wire_len, 61u);
  EXPECT_EQ(got[0].data, payload(61, 3));
}

TEST(FileSourcePcapng, TwoSectionsWithDifferentByteOrders) {
  Builder b(false);
  b.shb().idb(1, 0, 9).epb(0, 111, payload(20, 1));
  b.order(true).shb().idb(228, 0, 6).epb(0, 222, payload(30, 2));
  b.order(false).shb().idb(1, 0, 3).epb(0, 333, payload(40, 3));
  const auto got = read_memory(b.bytes);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].ts_ns, 111u);
  EXPECT_EQ(got[0].link_type, 1);
  EXPECT_EQ(got[0].data, payload(20, 1));
  EXPECT_EQ(got[1].ts_ns, 222000u);
  EXPECT_EQ(got[1].link_type, 228);
  EXPECT_EQ(got[1].data, payload(30, 2));
  EXPECT_EQ(got[2].ts_ns, 333000000u);
  EXPECT_EQ(got[2].data, payload(40, 3));
}

TEST(FileSourcePcapng, InterfacesWithDifferentResolutionsAndOffset) {
  Builder b;
  b.shb();
  b.idb(1, 0, 6);              // 10^-6 s
  b.idb(1, 0, 9, 1700000000);  // 10^-9 s, offset in seconds
  b.idb(1, 0, 0x80 | 10);      // 2^-10 s
  b.idb(1, 0, 12);             // 10^-12 s: finer than a ns, divided
  b.idb(1, 0, 0x80 | 40, -5);  // 2^-40 s, negative offset
  b.epb(0, 1500000, payload(10, 1));
  b.epb(1, 250, payload(10, 2));
  b.epb(2, 3 * 1024 + 512, payload(10, 3));
  b.epb(3, 7000123456789ull, payload(10, 4));
  b.epb(4, (std::uint64_t{6} << 40) + (std::uint64_t{1} << 39) + 1, payload(10, 5));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_TRUE(src->problems().empty());
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].ts_ns, 1500000000u);
  EXPECT_EQ(got[1].ts_ns, 1700000000000000250u);
  EXPECT_EQ(got[2].ts_ns, 3500000000u);
  EXPECT_EQ(got[3].ts_ns, 7000123456u);
  // 6.5 s + 2^-40 s (far below a ns, rounded down) - 5 s.
  EXPECT_EQ(got[4].ts_ns, 1500000000u);
}

// Each frame says which of the file's interfaces it came in on, numbered as interfaces() lists
// them: across sections, in file order (a second section's interface 0 is the file's third).
TEST(FileSourcePcapng, FramesCarryTheirInterfaceNumberedAcrossSections) {
  Builder b;
  b.shb().idb(1, 0).idb(1, 0);
  b.epb(1, 10, payload(20, 1)).epb(0, 20, payload(20, 2));
  b.shb().idb(1, 0);
  b.epb(0, 30, payload(20, 3));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].interface, 1u);
  EXPECT_EQ(got[1].interface, 0u);
  EXPECT_EQ(got[2].interface, 2u);
  ASSERT_EQ(src->interfaces().size(), 3u);
  EXPECT_EQ(src->interfaces()[2].section, 1u);
  EXPECT_EQ(src->interfaces()[2].index, 0u);
}

TEST(FileSourcePcapng, SimplePacketBlock) {
  Builder b;
  b.shb().idb(1, 64);
  b.spb(1500, payload(64, 1));  // cut to the snap length by the writer
  b.spb(30, payload(30, 2));
  b.spb(80, payload(42, 3));  // block holds 44 bytes after padding: caplen = min(80, 44, 64)
  const auto got = read_memory(b.bytes);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].ts_ns, 0u);
  EXPECT_EQ(got[0].caplen, 64u);
  EXPECT_EQ(got[0].wire_len, 1500u);
  EXPECT_EQ(got[0].data, payload(64, 1));
  EXPECT_EQ(got[1].caplen, 30u);
  EXPECT_EQ(got[1].wire_len, 30u);
  EXPECT_EQ(got[1].data, payload(30, 2));
  EXPECT_EQ(got[2].caplen, 44u);
  EXPECT_EQ(got[2].wire_len, 80u);
}

TEST(FileSourcePcapng, SimplePacketBlockWithoutInterfaceIsCorrupt) {
  Builder b;
  b.shb().spb(10, payload(10, 1));
  std::unique_ptr<FileSource> src;
  EXPECT_TRUE(read_memory(b.bytes, &src).empty());
  ASSERT_EQ(src->problems().size(), 1u);
  EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::corrupt);
  EXPECT_EQ(src->problems()[0].detail,
            "record 1 at byte 28 (simple packet block): the section defines no interface");
}

TEST(FileSourcePcapng, ObsoletePacketBlock) {
  Builder b;
  b.shb().idb(1, 0).idb(228, 0, 9).pb(1, 77, payload(33, 4));
  const auto got = read_memory(b.bytes);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ts_ns, 77u);
  EXPECT_EQ(got[0].link_type, 228);
  EXPECT_EQ(got[0].data, payload(33, 4));
}

TEST(FileSourcePcapng, UnknownBlocksAreSkipped) {
  Builder b;
  b.shb().block(0x0BAD, payload(13, 0)).idb(1, 0, 9);
  b.block(4, payload(40, 0));  // name resolution
  b.epb(0, 5, payload(10, 1));
  b.block(5, payload(20, 0));  // interface statistics
  b.block(0x40000BAD, {});
  b.epb(0, 6, payload(11, 2));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  EXPECT_TRUE(src->problems().empty());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].ts_ns, 5u);
  EXPECT_EQ(got[1].ts_ns, 6u);
  EXPECT_EQ(got[1].data, payload(11, 2));
}

TEST(FileSourcePcapng, EpbForUndefinedInterfaceIsCorrupt) {
  Builder b;
  b.shb().idb(1, 0).epb(0, 1, payload(10, 1)).epb(1, 2, payload(10, 2));
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(src->problems().size(), 1u);
  const FileProblem& p = src->problems()[0];
  EXPECT_EQ(p.kind, FileProblem::Kind::corrupt);
  EXPECT_EQ(p.offset, 28u + 24u + 44u);
  EXPECT_EQ(p.record, 2u);
  EXPECT_EQ(p.detail,
            "record 2 at byte 96 (enhanced packet block): interface 1 is not defined (the section "
            "defines 1)");
}

TEST(FileSourcePcapng, NewSectionForgetsInterfaces) {
  Builder b;
  b.shb().idb(1, 0).epb(0, 1, payload(10, 1)).shb().epb(0, 2, payload(10, 2));
  std::unique_ptr<FileSource> src;
  EXPECT_EQ(read_memory(b.bytes, &src).size(), 1u);
  ASSERT_EQ(src->problems().size(), 1u);
  EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::corrupt);
}

TEST(FileSourcePcapng, TruncatedLastBlock) {
  Builder b;
  b.shb().idb(1, 0, 9).epb(0, 1, payload(100, 1)).epb(0, 2, payload(100, 2));
  b.bytes.resize(b.bytes.size() - 50);
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(b.bytes, &src);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, payload(100, 1));
  ASSERT_EQ(src->problems().size(), 1u);
  const FileProblem& p = src->problems()[0];
  EXPECT_EQ(p.kind, FileProblem::Kind::truncated);
  EXPECT_EQ(p.offset, 28u + 32u + 132u);
  EXPECT_EQ(p.record, 2u);
  EXPECT_EQ(p.detail,
            "record 2 at byte 192 (enhanced packet block): the file ends inside the block (82 of "
            "132 bytes)");
}

// The file: SHB at 0, IDB at 28, EPBs at 60 and 132.
struct CorruptCase {
  const char* name;
  void (*damage)(Bytes&);
  std::uint64_t offset;
  const char* detail;
};

class FileSourcePcapngCorrupt : public ::testing::TestWithParam<CorruptCase> {};

void put_le32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

TEST_P(FileSourcePcapngCorrupt, StopsWithDetail) {
  Builder b;
  b.shb().idb(1, 0, 9).epb(0, 1, payload(40, 1)).epb(0, 2, payload(40, 2));
  Bytes file = b.bytes;
  GetParam().damage(file);
  std::unique_ptr<FileSource> src;
  const auto got = read_memory(file, &src);
  ASSERT_EQ(got.size(), 0u);
  ASSERT_EQ(src->problems().size(), 1u);
  const FileProblem& p = src->problems()[0];
  EXPECT_EQ(p.kind, FileProblem::Kind::corrupt);
  EXPECT_EQ(p.offset, GetParam().offset);
  EXPECT_EQ(p.record, 1u);
  EXPECT_EQ(p.detail, std::string(GetParam().detail));
}

INSTANTIATE_TEST_SUITE_P(
    Lengths, FileSourcePcapngCorrupt,
    ::testing::Values(
        CorruptCase{"NotMultipleOf4", [](Bytes& f) { put_le32(f, 64, 70); }, 60,
                    "record 1 at byte 60 (enhanced packet block): total length 70 is not a "
                    "multiple of 4"},
        CorruptCase{"BelowMinimum", [](Bytes& f) { put_le32(f, 64, 8); }, 60,
                    "record 1 at byte 60 (enhanced packet block): total length 8 is below the "
                    "minimum of 32"},
        CorruptCase{"TrailerDisagrees", [](Bytes& f) { put_le32(f, 60 + 72 - 4, 76); }, 60,
                    "record 1 at byte 60 (enhanced packet block): trailing length 76 disagrees "
                    "with the leading length 72"},
        CorruptCase{"CaplenBeyondBlock", [](Bytes& f) { put_le32(f, 60 + 20, 41); }, 60,
                    "record 1 at byte 60 (enhanced packet block): captured length 41 exceeds the "
                    "block's 40 bytes of packet space"},
        CorruptCase{"LengthBeyondLimit", [](Bytes& f) { put_le32(f, 64, 0xfffffff0u); }, 60,
                    "record 1 at byte 60 (enhanced packet block): total length 4294967280 "
                    "exceeds the limit of 16777216"},
        CorruptCase{"SkippedBlockBeyondFile",
                    [](Bytes& f) {
                      put_le32(f, 60, 0x0BAD);
                      put_le32(f, 64, 0x7ffffff0u);
                    },
                    60,
                    "block at byte 60 (block type 0x00000bad): total length 2147483632 runs past "
                    "the end of the file"},
        CorruptCase{"BadTsresolLength", [](Bytes& f) { f[28 + 16 + 2] = 2; }, 28,
                    "block at byte 28 (interface description block): option if_tsresol has "
                    "length 2 instead of 1"}),
    [](const ::testing::TestParamInfo<CorruptCase>& p) { return std::string(p.param.name); });

// Every prefix of a valid file either ends on a block boundary (clean, that many frames) or
// inside a block (exactly one "truncated" problem, the frames before it delivered).
TEST(FileSourcePcapng, EveryTruncationIsReportedExactly) {
  Builder b(true);
  b.shb().idb(1, 0, 9).epb(0, 1, payload(13, 1)).block(5, payload(8, 0)).spb(9, payload(9, 2));
  b.epb(0, 3, payload(1, 3));
  const std::vector<std::size_t> ends = {
      28, 60, 60 + 48, 60 + 48 + 20, 60 + 48 + 20 + 28, 60 + 48 + 20 + 28 + 36};
  ASSERT_EQ(b.bytes.size(), ends.back());
  const std::vector<std::size_t> frames_at = {0, 0, 1, 1, 2, 3};
  for (std::size_t cut = 28; cut <= b.bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    const Bytes prefix(b.bytes.begin(), b.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    std::unique_ptr<FileSource> src;
    const auto got = read_memory(prefix, &src);
    std::size_t k = 0;
    while (k + 1 < ends.size() && ends[k + 1] <= cut) ++k;
    EXPECT_EQ(got.size(), frames_at[k]);
    if (cut == ends[k]) {
      EXPECT_TRUE(src->problems().empty());
    } else {
      ASSERT_EQ(src->problems().size(), 1u);
      EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::truncated);
      EXPECT_EQ(src->problems()[0].offset, ends[k]);
    }
  }
}

TEST(FileSourcePcap, EveryTruncationIsReportedExactly) {
  Builder b;
  b.pcap_header(0xa1b23c4d).pcap_record(1, 1, payload(5, 1)).pcap_record(2, 2, payload(0, 0));
  b.pcap_record(3, 3, payload(30, 3));
  const std::vector<std::size_t> ends = {24, 45, 61, 107};
  ASSERT_EQ(b.bytes.size(), ends.back());
  for (std::size_t cut = 24; cut <= b.bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    const Bytes prefix(b.bytes.begin(), b.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    std::unique_ptr<FileSource> src;
    const auto got = read_memory(prefix, &src);
    std::size_t k = 0;
    while (k + 1 < ends.size() && ends[k + 1] <= cut) ++k;
    EXPECT_EQ(got.size(), k);
    EXPECT_EQ(src->records(), k);
    if (cut == ends[k]) {
      EXPECT_TRUE(src->problems().empty());
    } else {
      ASSERT_EQ(src->problems().size(), 1u);
      EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::truncated);
      EXPECT_EQ(src->problems()[0].offset, ends[k]);
      EXPECT_EQ(src->problems()[0].record, k + 1);
    }
  }
}

// Damaged input must never crash or read out of bounds (the fuzzer goes further; this runs in
// every unit test pass, under the sanitizers in the asan preset).
TEST(FileSourcePcapng, ByteFlipsNeverCrash) {
  Builder b;
  b.shb().idb(1, 64, 9, 3).epb(0, 1, payload(13, 1)).block(5, payload(8, 0));
  b.spb(9, payload(9, 2)).pb(0, 5, payload(7, 1)).epb(0, 3, payload(1, 3));
  for (std::size_t i = 0; i < b.bytes.size(); ++i) {
    for (std::uint8_t v : {std::uint8_t{0}, std::uint8_t{0xff}, std::uint8_t{0x80},
                           static_cast<std::uint8_t>(b.bytes[i] ^ 1)}) {
      Bytes damaged = b.bytes;
      damaged[i] = v;
      try {
        auto src = FileSource::from_memory(damaged);
        const auto got = read_all(*src, 2);
        EXPECT_LE(got.size(), 5u);
        EXPECT_LE(src->problems().size(), 1u);
        for (const Got& g : got) EXPECT_LE(g.caplen, g.wire_len);
      } catch (const Error&) {
        EXPECT_LT(i, 28u);  // only a damaged first section header may refuse the file
      }
    }
  }
}

// ---- files, pipes and standard input through the read buffer ---------------------------------

struct Written {
  std::uint64_t ts_ns;
  Bytes data;
};

// Frames of sizes that put records across every possible position of a 4 KiB buffer edge; every
// 97th is over 7000 bytes, larger than the small buffers the tests use, so the buffer must grow.
std::vector<Written> make_frames(std::size_t n) {
  std::vector<Written> frames;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t size = 14 + (i * 131) % 1500 + (i % 97 == 0 ? 7000 : 0);
    frames.push_back(
        {1700000000000000000ull + i * 1001, payload(size, static_cast<std::uint8_t>(i))});
  }
  return frames;
}

std::string write_frames(const std::string& name, FileFormat format,
                         const std::vector<Written>& frames) {
  const std::string path = temp_path(name);
  PcapWriter w(path, format);
  for (const Written& f : frames) w.write(f.ts_ns, f.data);
  w.close();
  return path;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void expect_frames(const std::vector<Got>& got, const std::vector<Written>& want,
                   FileFormat format) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    const std::uint64_t ts =
        format == FileFormat::pcap_us ? want[i].ts_ns / 1000 * 1000 : want[i].ts_ns;
    ASSERT_EQ(got[i].ts_ns, ts);
    ASSERT_EQ(got[i].caplen, want[i].data.size());
    ASSERT_EQ(got[i].wire_len, want[i].data.size());
    ASSERT_EQ(got[i].data, want[i].data);
  }
}

// Feeds bytes into a pipe from a thread in small uneven writes, so the reader meets short reads
// and partial records at the end of its buffer. Declare it before the source that reads path(),
// so the source closes its end first and a writer still blocked on a full pipe gets EPIPE.
class PipeFeeder {
 public:
  explicit PipeFeeder(Bytes bytes) : bytes_(std::move(bytes)) {
    if (::pipe(fds_) != 0) {
      ADD_FAILURE() << "pipe: " << std::strerror(errno);
      fds_[0] = fds_[1] = -1;
      return;
    }
    // If the reader gives up early, the writer must get EPIPE rather than kill the test binary.
    old_sigpipe_ = std::signal(SIGPIPE, SIG_IGN);
    writer_ = std::thread([this] {
      std::size_t off = 0, step = 1;
      while (off < bytes_.size()) {
        const std::size_t n = std::min(bytes_.size() - off, step);
        const ssize_t w = ::write(fds_[1], bytes_.data() + off, n);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
        step = step * 3 % 20011 + 1;
      }
      ::close(fds_[1]);
    });
  }
  ~PipeFeeder() {
    if (fds_[0] < 0) return;
    ::close(fds_[0]);
    writer_.join();
    std::signal(SIGPIPE, old_sigpipe_);
  }
  PipeFeeder(const PipeFeeder&) = delete;
  PipeFeeder& operator=(const PipeFeeder&) = delete;

  // Opening this reopens the pipe's read end, as a shell's <(...) or a FIFO would be opened.
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  Bytes bytes_;
  int fds_[2] = {-1, -1};
  void (*old_sigpipe_)(int) = SIG_DFL;
  std::thread writer_;
};

enum class Input { file, pipe };

const char* input_name(Input input) {
  return input == Input::file ? "file" : "pipe";
}

// Everything a reading leaves behind, so results through different inputs can be compared.
struct Outcome {
  std::string open_error;  // empty when the source opened
  std::vector<Got> frames;
  std::vector<FileProblem> problems;
  std::uint64_t records = 0;
  std::uint64_t consumed = 0;
  std::uint64_t size_hint = 0;
};

Outcome collect(const std::function<std::unique_ptr<FileSource>()>& open, std::size_t batch) {
  Outcome o;
  try {
    auto src = open();
    o.frames = read_all(*src, batch);
    o.problems = src->problems();
    o.records = src->records();
    o.consumed = src->bytes_consumed();
    o.size_hint = src->size_hint();
  } catch (const Error& e) {
    o.open_error = e.what();
  }
  return o;
}

// Reads `bytes` as a regular file or through a pipe with a read buffer of `read_bytes`. Both
// report the name "capture" so messages compare equal to a memory read of the same bytes.
Outcome read_via(Input input, const Bytes& bytes, std::size_t read_bytes, std::size_t batch) {
  WindowOptions opt;
  opt.read_bytes = read_bytes;
  if (input == Input::file) {
    const std::string path = temp_path("via_file");
    write_file(path, bytes);
    Outcome o = collect([&] { return open_file_source(path, opt); }, batch);
    std::remove(path.c_str());
    // Messages name the path; strip it so they compare with the other inputs.
    if (o.open_error.rfind(path, 0) == 0)
      o.open_error = "capture" + o.open_error.substr(path.size());
    return o;
  }
  PipeFeeder feeder(bytes);
  Outcome o = collect([&] { return open_file_source(feeder.path(), opt); }, batch);
  const std::string path = feeder.path();
  if (o.open_error.rfind(path, 0) == 0) o.open_error = "capture" + o.open_error.substr(path.size());
  return o;
}

Outcome read_from_memory(const Bytes& bytes, std::size_t batch) {
  return collect([&] { return FileSource::from_memory(bytes, "capture"); }, batch);
}

// The read path, whatever its buffer size and however the pipe splits the input, must produce
// exactly what reading the same bytes from memory produces: frames, problems, messages.
void expect_same_outcome(const Outcome& got, const Outcome& want) {
  EXPECT_EQ(got.open_error, want.open_error);
  ASSERT_EQ(got.frames.size(), want.frames.size());
  for (std::size_t i = 0; i < want.frames.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got.frames[i].ts_ns, want.frames[i].ts_ns);
    EXPECT_EQ(got.frames[i].caplen, want.frames[i].caplen);
    EXPECT_EQ(got.frames[i].wire_len, want.frames[i].wire_len);
    EXPECT_EQ(got.frames[i].link_type, want.frames[i].link_type);
    EXPECT_EQ(got.frames[i].data, want.frames[i].data);
  }
  EXPECT_EQ(got.records, want.records);
  ASSERT_EQ(got.problems.size(), want.problems.size());
  for (std::size_t i = 0; i < want.problems.size(); ++i) {
    EXPECT_EQ(got.problems[i].kind, want.problems[i].kind);
    EXPECT_EQ(got.problems[i].offset, want.problems[i].offset);
    EXPECT_EQ(got.problems[i].record, want.problems[i].record);
    EXPECT_EQ(got.problems[i].detail, want.problems[i].detail);
  }
  // Where reading stopped early the position is not meaningful; at a clean end it is the size.
  if (want.open_error.empty() && want.problems.empty()) {
    EXPECT_EQ(got.consumed, want.consumed);
  }
}

class FileSourcePaths : public ::testing::TestWithParam<FileFormat> {};

TEST_P(FileSourcePaths, TinyBufferCrossesRecordBoundaries) {
  const auto frames = make_frames(3000);
  const std::string path =
      write_frames(std::string("tiny_") + to_string(GetParam()), GetParam(), frames);
  const std::uint64_t size = read_file(path).size();
  // A page-sized buffer and an odd one, so buffer ends fall at every offset within records;
  // several batch sizes, so batch ends fall everywhere relative to buffer ends.
  for (std::size_t read_bytes : {4096u, 5003u}) {
    for (std::size_t batch : {1u, 7u, 64u, 256u}) {
      SCOPED_TRACE(::testing::Message() << "buffer " << read_bytes << " batch " << batch);
      WindowOptions opt;
      opt.read_bytes = read_bytes;
      auto src = open_file_source(path, opt);
      EXPECT_EQ(src->format(), GetParam());
      EXPECT_EQ(src->size_hint(), size);
      expect_frames(read_all(*src, batch), frames, GetParam());
      EXPECT_TRUE(src->problems().empty());
      EXPECT_EQ(src->records(), frames.size());
      EXPECT_EQ(src->bytes_consumed(), size);
    }
  }
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, DefaultOpenReadsMoreThanOneBatch) {
  const auto frames = make_frames(1000);
  const std::string path =
      write_frames(std::string("open_") + to_string(GetParam()), GetParam(), frames);
  auto src = FileSource::open(path);
  EXPECT_EQ(src->size_hint(), read_file(path).size());
  expect_frames(read_all(*src, 100), frames, GetParam());
  EXPECT_TRUE(src->problems().empty());
  EXPECT_EQ(src->bytes_consumed(), src->size_hint());
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, RecordsLargerThanTheBufferMakeItGrow) {
  const auto frames = make_frames(1500);
  const std::string path =
      write_frames(std::string("grow_") + to_string(GetParam()), GetParam(), frames);
  // 1 byte: every header already needs growth. 1000: most records do not fit. 4096: the first
  // record (over 7000 bytes) does not fit, so the buffer grows before anything is decoded.
  for (std::size_t read_bytes : {1u, 1000u, 4096u}) {
    for (std::size_t batch : {1u, 5u, 256u}) {
      SCOPED_TRACE(::testing::Message() << "buffer " << read_bytes << " batch " << batch);
      WindowOptions opt;
      opt.read_bytes = read_bytes;
      auto src = open_file_source(path, opt);
      expect_frames(read_all(*src, batch), frames, GetParam());
      EXPECT_TRUE(src->problems().empty());
    }
  }
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, Pipe) {
  const auto frames = make_frames(2000);
  const std::string path =
      write_frames(std::string("pipe_") + to_string(GetParam()), GetParam(), frames);
  const Bytes file = read_file(path);
  std::remove(path.c_str());
  for (std::size_t read_bytes : {std::size_t{4096}, WindowOptions{}.read_bytes}) {
    SCOPED_TRACE(read_bytes);
    PipeFeeder feeder(file);
    WindowOptions opt;
    opt.read_bytes = read_bytes;
    auto src = open_file_source(feeder.path(), opt);
    EXPECT_EQ(src->size_hint(), 0u);  // a pipe's length is unknown
    expect_frames(read_all(*src, 64), frames, GetParam());
    EXPECT_TRUE(src->problems().empty());
    EXPECT_EQ(src->bytes_consumed(), file.size());
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, FileSourcePaths,
                         ::testing::Values(FileFormat::pcap_us, FileFormat::pcap_ns,
                                           FileFormat::pcapng),
                         rocehil::capture::testing::format_param_name);

TEST(FileSourcePaths, StandardInput) {
  const auto frames = make_frames(50);
  const std::string path = write_frames("stdin.pcapng", FileFormat::pcapng, frames);
  const int saved = ::dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, STDIN_FILENO), STDIN_FILENO);
  ::close(fd);
  {
    auto src = FileSource::open("-");
    EXPECT_EQ(src->name(), "<stdin>");
    EXPECT_EQ(src->size_hint(), read_file(path).size());
    expect_frames(read_all(*src), frames, FileFormat::pcapng);
  }
  // The source must not have closed standard input.
  EXPECT_EQ(::fcntl(STDIN_FILENO, F_GETFD), 0);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  std::remove(path.c_str());
}

// Standard input redirected from a file another process already read part of: reading starts at
// the current position, and progress counts only what is left.
TEST(FileSourcePaths, StandardInputPartWayIntoAFile) {
  const auto frames = make_frames(20);
  const std::string capture = write_frames("stdin_mid.pcap", FileFormat::pcap_ns, frames);
  const Bytes body = read_file(capture);
  std::remove(capture.c_str());
  Bytes file = payload(1000, 9);  // whatever came before
  file.insert(file.end(), body.begin(), body.end());
  const std::string path = temp_path("stdin_mid.bin");
  write_file(path, file);
  const int saved = ::dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::lseek(fd, 1000, SEEK_SET), 1000);
  ASSERT_EQ(::dup2(fd, STDIN_FILENO), STDIN_FILENO);
  ::close(fd);
  {
    auto src = FileSource::open("-");
    EXPECT_EQ(src->size_hint(), body.size());
    expect_frames(read_all(*src), frames, FileFormat::pcap_ns);
    EXPECT_EQ(src->bytes_consumed(), body.size());
  }
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  std::remove(path.c_str());
}

TEST(FileSourcePaths, TruncatedInputThroughTinyBuffer) {
  const auto frames = make_frames(400);
  const std::string path = write_frames("trunc.pcap", FileFormat::pcap_ns, frames);
  const Bytes file = read_file(path);
  std::remove(path.c_str());
  const std::size_t last = file.size() - 16 - frames.back().data.size();  // the last record
  // Inside the last record's data, inside its header, and exactly before it (a clean end).
  for (std::size_t cut : {file.size() - 10, last + 5, last}) {
    const Bytes prefix(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut));
    for (Input input : {Input::file, Input::pipe}) {
      SCOPED_TRACE(::testing::Message() << input_name(input) << " cut " << cut);
      const Outcome o = read_via(input, prefix, 4096, 32);
      ASSERT_TRUE(o.open_error.empty()) << o.open_error;
      EXPECT_EQ(o.frames.size(), frames.size() - 1);
      if (cut == last) {
        EXPECT_TRUE(o.problems.empty());
        continue;
      }
      ASSERT_EQ(o.problems.size(), 1u);
      EXPECT_EQ(o.problems[0].kind, FileProblem::Kind::truncated);
      EXPECT_EQ(o.problems[0].offset, last);
      EXPECT_EQ(o.problems[0].record, frames.size());
      expect_same_outcome(o, read_from_memory(prefix, 32));
    }
  }
}

// Every prefix of a small capture, read through buffers smaller than its blocks, from a file and
// from a pipe, gives what the memory reader gives: the same frames, or the same problem with the
// same message, or the same refusal to open.
TEST(FileSourcePaths, EveryTruncationMatchesTheMemoryReader) {
  Builder ng(true);
  ng.shb().idb(1, 0, 9).epb(0, 1, payload(13, 1)).block(5, payload(80, 0)).spb(9, payload(9, 2));
  ng.epb(0, 3, payload(100, 3)).pb(0, 4, payload(7, 4));
  Builder pc;
  pc.pcap_header(0xa1b23c4d).pcap_record(1, 1, payload(5, 1)).pcap_record(2, 2, payload(0, 0));
  pc.pcap_record(3, 3, payload(90, 3));
  for (const Bytes* file : {&ng.bytes, &pc.bytes}) {
    for (std::size_t cut = 0; cut <= file->size(); ++cut) {
      const Bytes prefix(file->begin(), file->begin() + static_cast<std::ptrdiff_t>(cut));
      const Outcome want = read_from_memory(prefix, 2);
      for (std::size_t read_bytes : {1u, 13u, 64u}) {
        SCOPED_TRACE(::testing::Message() << "cut " << cut << " buffer " << read_bytes);
        expect_same_outcome(read_via(Input::file, prefix, read_bytes, 2), want);
      }
      SCOPED_TRACE(::testing::Message() << "pipe, cut " << cut);
      expect_same_outcome(read_via(Input::pipe, prefix, 13, 2), want);
    }
  }
}

// Blocks the reader must hold whole (here a section header with a long comment) may be larger
// than the buffer, even as the very first block.
TEST(FileSourcePaths, HeldBlockLargerThanTheBufferAtTheStart) {
  Builder shb;
  shb.u32(0x1A2B3C4D).u16(1).u16(0).u64(~std::uint64_t{0});
  shb.u16(1).u16(10001).raw(payload(10001, 5)).pad4().u16(0).u16(0);  // opt_comment
  Builder b;
  b.block(0x0A0D0D0A, shb.bytes).idb(1, 0, 9).epb(0, 7, payload(60, 1));
  b.epb(0, 8, payload(5000, 2)).epb(0, 9, payload(60, 3));
  const Outcome want = read_from_memory(b.bytes, 8);
  ASSERT_TRUE(want.open_error.empty()) << want.open_error;
  ASSERT_EQ(want.frames.size(), 3u);
  for (Input input : {Input::file, Input::pipe}) {
    SCOPED_TRACE(input_name(input));
    expect_same_outcome(read_via(input, b.bytes, 4096, 8), want);
  }
}

// An ignored block much larger than the buffer is passed over without being held: by seeking on a
// regular file, by reading through on a pipe.
TEST(FileSourcePaths, LargeUnknownBlockSkippedOnEveryInput) {
  Builder b;
  b.shb().idb(1, 0, 9).epb(0, 1, payload(10, 1));
  b.block(0x0BAD, payload(50000, 0));  // much larger than the buffer below
  b.epb(0, 2, payload(10, 2));
  for (Input input : {Input::file, Input::pipe}) {
    SCOPED_TRACE(input_name(input));
    const Outcome o = read_via(input, b.bytes, 4096, 8);
    ASSERT_EQ(o.frames.size(), 2u);
    EXPECT_EQ(o.frames[1].data, payload(10, 2));
    EXPECT_TRUE(o.problems.empty());
    EXPECT_EQ(o.consumed, b.bytes.size());
  }

  // A damaged trailing length copy of the skipped block is still caught.
  Bytes damaged = b.bytes;
  damaged[104 + 8 + 50000] ^= 1;
  // A skipped block whose length runs past the end of the file: a plausible length is a
  // truncated capture, an absurd one is corruption. Seeking past the end must notice it as
  // reading through does.
  Bytes cut = b.bytes;
  cut.resize(104 + 20000);
  Bytes absurd = b.bytes;
  put_le32(absurd, 104 + 4, 0x7ffffff0u);
  for (const Bytes* file : {&damaged, &cut, &absurd}) {
    const Outcome want = read_from_memory(*file, 8);
    ASSERT_EQ(want.problems.size(), 1u);
    EXPECT_EQ(want.problems[0].offset, 104u);
    EXPECT_EQ(want.frames.size(), 1u);
    for (Input input : {Input::file, Input::pipe}) {
      SCOPED_TRACE(input_name(input));
      expect_same_outcome(read_via(input, *file, 4096, 8), want);
    }
  }
  EXPECT_EQ(read_from_memory(damaged, 8).problems[0].kind, FileProblem::Kind::corrupt);
  EXPECT_EQ(read_from_memory(cut, 8).problems[0].kind, FileProblem::Kind::truncated);
  EXPECT_EQ(read_from_memory(absurd, 8).problems[0].kind, FileProblem::Kind::corrupt);
}

// ---- the byte window itself ------------------------------------------------------------------

std::size_t round_up_4k(std::size_t v) {
  return (v + 4095) / 4096 * 4096;
}

// Walks a capture much larger than the buffer record by record, asking for exactly what the
// reader asks for. The buffer never exceeds the larger of the requested size and the largest
// record (rounded to a page): resident memory does not follow the file size.
TEST(ByteWindow, BufferStaysBoundedOverALargeCapture) {
  const auto frames = make_frames(8000);  // about 7 MB
  const std::string path = write_frames("bounded.pcap", FileFormat::pcap_ns, frames);
  const Bytes file = read_file(path);
  for (std::size_t read_bytes : {std::size_t{4096}, WindowOptions{}.read_bytes}) {
    SCOPED_TRACE(read_bytes);
    ASSERT_GT(file.size(), 16 * read_bytes);
    WindowOptions opt;
    opt.read_bytes = read_bytes;
    ByteWindow w = ByteWindow::open(path, path, opt);
    EXPECT_EQ(w.input_size(), file.size());
    EXPECT_EQ(w.capacity(), read_bytes);
    std::uint64_t at = 24;
    std::size_t largest = 0;
    std::size_t n = 0;
    while (at < file.size()) {
      ASSERT_GE(w.ensure(at, 16), 16u);
      const std::uint8_t* h = w.data() + (at - w.offset());
      std::uint32_t caplen;  // the writer uses native byte order
      std::memcpy(&caplen, h + 8, 4);
      const std::size_t need = 16 + std::size_t{caplen};
      ASSERT_GE(w.ensure(at, need), need);
      const std::uint8_t* r = w.data() + (at - w.offset());
      ASSERT_TRUE(std::equal(r, r + need, file.begin() + static_cast<std::ptrdiff_t>(at)));
      largest = std::max(largest, need);
      ASSERT_LE(w.capacity(), std::max(read_bytes, round_up_4k(largest)));
      at += need;
      ++n;
    }
    EXPECT_EQ(n, frames.size());
    EXPECT_EQ(w.ensure(at, 1), 0u);
    EXPECT_EQ(w.error(), 0);
    // 4096 had to grow for the 7000-byte records; the default never needed to.
    if (read_bytes == 4096) {
      EXPECT_EQ(w.capacity(), round_up_4k(largest));
    } else {
      EXPECT_EQ(w.capacity(), read_bytes);
    }
  }
  std::remove(path.c_str());
}

TEST(ByteWindow, CompactsAndGrowsOnlyForLargerRequests) {
  const std::string path = temp_path("window.bin");
  Bytes content(1 << 20);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>(i * 31);
  write_file(path, content);
  WindowOptions opt;
  opt.read_bytes = 8192;
  ByteWindow w = ByteWindow::open(path, path, opt);
  EXPECT_EQ(w.input_size(), content.size());
  for (std::uint64_t at = 0; at < content.size(); at += 5000) {
    const std::size_t want = std::min<std::size_t>(3000, content.size() - at);
    ASSERT_GE(w.ensure(at, 3000), want);
    EXPECT_LE(w.capacity(), 8192u);
    ASSERT_TRUE(std::equal(w.data() + (at - w.offset()), w.data() + (at - w.offset()) + want,
                           content.begin() + static_cast<std::ptrdiff_t>(at)));
  }
  // A request larger than the buffer grows it to that request, rounded to a page, and no more.
  ByteWindow g = ByteWindow::open(path, path, opt);
  ASSERT_GE(g.ensure(100000, 20000), 20000u);
  EXPECT_EQ(g.capacity(), 20480u);
  EXPECT_EQ(g.data()[100000 + 19999 - g.offset()], content[119999]);
  ASSERT_GE(g.ensure(130000, 100), 100u);
  EXPECT_EQ(g.capacity(), 20480u);
  EXPECT_EQ(g.data()[130000 - g.offset()], content[130000]);
  EXPECT_EQ(g.ensure(content.size() - 10, 100), 10u);
  EXPECT_EQ(g.data()[9 + content.size() - 10 - g.offset()], content.back());
  EXPECT_EQ(g.ensure(content.size(), 1), 0u);
  EXPECT_EQ(g.error(), 0);
  std::remove(path.c_str());
}

// Skipping forward seeks on a regular file and reads through on a pipe; both must land on the
// same bytes, and both must notice a skip that goes past the end.
TEST(ByteWindow, SkipsForwardOnFilesAndPipes) {
  const std::string path = temp_path("window_read.bin");
  Bytes content(100000);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>(i * 13);
  write_file(path, content);
  WindowOptions opt;
  opt.read_bytes = 1000;
  for (Input input : {Input::file, Input::pipe}) {
    SCOPED_TRACE(input_name(input));
    std::unique_ptr<PipeFeeder> feeder;
    if (input == Input::pipe) feeder = std::make_unique<PipeFeeder>(content);
    const std::string name = feeder ? feeder->path() : path;
    ByteWindow w = ByteWindow::open(name, name, opt);
    EXPECT_EQ(w.input_size(), input == Input::file ? content.size() : 0u);
    ASSERT_GE(w.ensure(10, 100), 100u);
    EXPECT_EQ(w.data()[10 - w.offset()], content[10]);
    ASSERT_GE(w.ensure(50000, 4), 4u);  // skips bytes it never shows
    EXPECT_EQ(w.offset(), 50000u);
    EXPECT_EQ(w.data()[0], content[50000]);
    ASSERT_GE(w.ensure(50002, 3000), 3000u);  // larger than the buffer: it grows
    EXPECT_EQ(w.data()[2999], content[50002 + 2999]);
    ASSERT_GE(w.ensure(60000, 1), 1u);  // a short skip just past what the buffer holds
    EXPECT_EQ(w.data()[60000 - w.offset()], content[60000]);
    EXPECT_EQ(w.ensure(99990, 100), 10u);
    EXPECT_EQ(w.data()[99999 - w.offset()], content[99999]);
    EXPECT_EQ(w.ensure(200000, 1), 0u);
    EXPECT_EQ(w.ensure(200001, 1), 0u);  // and stays at the end
    EXPECT_EQ(w.error(), 0);
  }
  std::remove(path.c_str());
}

TEST(ByteWindow, MemoryHasNoBuffer) {
  const Bytes content = payload(100, 1);
  ByteWindow w = ByteWindow::memory(content);
  EXPECT_EQ(w.input_size(), 100u);
  EXPECT_EQ(w.capacity(), 0u);
  EXPECT_EQ(w.ensure(40, 10), 60u);
  EXPECT_EQ(w.ensure(40, 100), 60u);  // fewer than asked: the input ends
  EXPECT_EQ(w.ensure(101, 1), 0u);
}

}  // namespace
}  // namespace rocehil::capture
