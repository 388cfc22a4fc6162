#include "rocehil/capture/file_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "format_param_name.hpp"

#include <algorithm>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "byte_window.hpp"
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
      out.push_back(
          Got{f.ts_ns, f.caplen, f.wire_len, f.link_type, Bytes(f.data, f.data + f.caplen)});
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

// ---- the mapped, read and pipe paths over real files -----------------------------------------

struct Written {
  std::uint64_t ts_ns;
  Bytes data;
};

// Frames of sizes that put records across every possible position of a 4 KiB window edge.
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

class FileSourcePaths : public ::testing::TestWithParam<FileFormat> {};

TEST_P(FileSourcePaths, MappedWithTinyWindowCrossesRecordBoundaries) {
  const auto frames = make_frames(3000);
  const std::string path =
      write_frames(std::string("map_") + to_string(GetParam()), GetParam(), frames);
  WindowOptions opt;
  opt.map_bytes = 4096;
  auto src = open_file_source(path, opt);
  EXPECT_EQ(src->format(), GetParam());
  // Several batch sizes so batch ends fall everywhere relative to window ends.
  for (std::size_t batch : {1u, 7u, 64u}) {
    SCOPED_TRACE(batch);
    auto again = open_file_source(path, opt);
    expect_frames(read_all(*again, batch), frames, GetParam());
    EXPECT_TRUE(again->problems().empty());
  }
  expect_frames(read_all(*src, 256), frames, GetParam());
  EXPECT_EQ(src->records(), frames.size());
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, DefaultOpenReadsMoreThanOneBatch) {
  const auto frames = make_frames(1000);
  const std::string path =
      write_frames(std::string("open_") + to_string(GetParam()), GetParam(), frames);
  auto src = FileSource::open(path);
  expect_frames(read_all(*src, 100), frames, GetParam());
  EXPECT_TRUE(src->problems().empty());
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, ReadPathWithTinyBufferCompactsAndGrows) {
  const auto frames = make_frames(1500);  // includes 8.5 KiB frames, larger than the buffer
  const std::string path =
      write_frames(std::string("read_") + to_string(GetParam()), GetParam(), frames);
  WindowOptions opt;
  opt.force_read = true;
  opt.read_bytes = 4096;
  for (std::size_t batch : {1u, 5u, 256u}) {
    SCOPED_TRACE(batch);
    auto src = open_file_source(path, opt);
    expect_frames(read_all(*src, batch), frames, GetParam());
    EXPECT_TRUE(src->problems().empty());
  }
  std::remove(path.c_str());
}

TEST_P(FileSourcePaths, Pipe) {
  const auto frames = make_frames(2000);
  const std::string path =
      write_frames(std::string("pipe_") + to_string(GetParam()), GetParam(), frames);
  Bytes file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  // If the reader gives up early, the writer must get EPIPE rather than kill the test binary.
  const auto old_sigpipe = std::signal(SIGPIPE, SIG_IGN);
  // Small uneven writes make the reader meet partial records at the end of its buffer.
  std::thread writer([&] {
    std::size_t off = 0, step = 1;
    while (off < file.size()) {
      const std::size_t n = std::min(file.size() - off, step);
      const ssize_t w = ::write(fds[1], file.data() + off, n);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
      step = step * 3 % 20011 + 1;
    }
    ::close(fds[1]);
  });
  WindowOptions opt;
  opt.read_bytes = 8192;
  {
    auto src = open_file_source("/dev/fd/" + std::to_string(fds[0]), opt);
    expect_frames(read_all(*src, 64), frames, GetParam());
    EXPECT_TRUE(src->problems().empty());
  }
  ::close(fds[0]);
  writer.join();
  std::signal(SIGPIPE, old_sigpipe);
  std::remove(path.c_str());
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
    expect_frames(read_all(*src), frames, FileFormat::pcapng);
  }
  // The source must not have closed standard input.
  EXPECT_EQ(::fcntl(STDIN_FILENO, F_GETFD), 0);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  std::remove(path.c_str());
}

TEST(FileSourcePaths, TruncatedFileThroughMapping) {
  const auto frames = make_frames(400);
  const std::string path = write_frames("trunc.pcap", FileFormat::pcap_ns, frames);
  std::size_t size = 24;
  for (const Written& f : frames) size += 16 + f.data.size();
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size - 10)), 0);
  WindowOptions opt;
  opt.map_bytes = 4096;
  auto src = open_file_source(path, opt);
  const auto got = read_all(*src, 32);
  EXPECT_EQ(got.size(), frames.size() - 1);
  ASSERT_EQ(src->problems().size(), 1u);
  EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::truncated);
  EXPECT_EQ(src->problems()[0].offset, size - 16 - frames.back().data.size());
  EXPECT_EQ(src->problems()[0].record, frames.size());
  std::remove(path.c_str());
}

TEST(FileSourcePaths, LargeUnknownBlockSkippedOnEveryPath) {
  Builder b;
  b.shb().idb(1, 0, 9).epb(0, 1, payload(10, 1));
  b.block(0x0BAD, payload(50000, 0));  // much larger than the windows below
  b.epb(0, 2, payload(10, 2));
  const std::string path = temp_path("bigblock.pcapng");
  write_file(path, b.bytes);
  WindowOptions map;
  map.map_bytes = 4096;
  WindowOptions read;
  read.force_read = true;
  read.read_bytes = 4096;
  for (const WindowOptions& opt : {map, read}) {
    auto src = open_file_source(path, opt);
    const auto got = read_all(*src, 8);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].data, payload(10, 2));
    EXPECT_TRUE(src->problems().empty());
  }
  // A damaged trailing length copy of the skipped block is still caught.
  b.bytes[104 + 8 + 50000] ^= 1;
  write_file(path, b.bytes);
  for (const WindowOptions& opt : {map, read}) {
    auto src = open_file_source(path, opt);
    EXPECT_EQ(read_all(*src, 8).size(), 1u);
    ASSERT_EQ(src->problems().size(), 1u);
    EXPECT_EQ(src->problems()[0].kind, FileProblem::Kind::corrupt);
    EXPECT_EQ(src->problems()[0].offset, 104u);
  }
  std::remove(path.c_str());
}

// ---- the byte window itself ------------------------------------------------------------------

TEST(ByteWindow, MappingStaysWithinOneWindow) {
  const std::string path = temp_path("window.bin");
  Bytes content(1 << 20);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>(i * 31);
  write_file(path, content);
  WindowOptions opt;
  opt.map_bytes = 8192;
  ByteWindow w = ByteWindow::open(path, path, opt);
  ASSERT_TRUE(w.mapped());
  for (std::uint64_t at = 0; at < content.size(); at += 5000) {
    const std::size_t got = w.ensure(at, 3000);
    ASSERT_GE(got, std::min<std::size_t>(3000, content.size() - at));
    EXPECT_LE(w.mapped_bytes(), 8192u);
    EXPECT_EQ(w.data()[at - w.offset()], content[at]);
  }
  // A request larger than the window gets a larger mapping, and only that one.
  EXPECT_GE(w.ensure(100000, 20000), 20000u);
  EXPECT_LE(w.mapped_bytes(), 20000u + 8192u);
  EXPECT_EQ(w.data()[100000 + 19999 - w.offset()], content[119999]);
  EXPECT_EQ(w.ensure(content.size() - 10, 100), 10u);
  EXPECT_EQ(w.ensure(content.size(), 1), 0u);
  EXPECT_EQ(w.error(), 0);
  std::remove(path.c_str());
}

TEST(ByteWindow, ReadModeSkipsForward) {
  const std::string path = temp_path("window_read.bin");
  Bytes content(100000);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::uint8_t>(i * 13);
  write_file(path, content);
  WindowOptions opt;
  opt.force_read = true;
  opt.read_bytes = 1000;
  ByteWindow w = ByteWindow::open(path, path, opt);
  ASSERT_FALSE(w.mapped());
  ASSERT_GE(w.ensure(10, 100), 100u);
  EXPECT_EQ(w.data()[10 - w.offset()], content[10]);
  ASSERT_GE(w.ensure(50000, 4), 4u);  // skips bytes it never shows
  EXPECT_EQ(w.offset(), 50000u);
  EXPECT_EQ(w.data()[0], content[50000]);
  ASSERT_GE(w.ensure(50002, 3000), 3000u);  // larger than the buffer: it grows
  EXPECT_EQ(w.data()[2999], content[50002 + 2999]);
  EXPECT_EQ(w.ensure(99990, 100), 10u);
  EXPECT_EQ(w.ensure(200000, 1), 0u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace rocehil::capture
