#include "writers/rotating_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rocehil/capture/file_source.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::capture {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir()
      : path_(::testing::TempDir() + "rocehil_rw_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Frame i: 100 bytes, its index in the first four, stamped i microseconds after 1 s.
std::vector<std::uint8_t> frame(std::uint32_t i) {
  std::vector<std::uint8_t> f(100, 0xab);
  std::memcpy(f.data(), &i, 4);
  return f;
}

std::vector<std::uint32_t> indices_in(const std::string& path) {
  std::vector<std::uint32_t> got;
  auto source = FileSource::open(path);
  std::vector<Frame> frames(32);
  while (const std::size_t n = source->next_batch(frames)) {
    for (std::size_t k = 0; k < n; ++k) {
      std::uint32_t i = 0;
      std::memcpy(&i, frames[k].data, 4);
      EXPECT_EQ(frames[k].ts_ns, 1'000'000'000ull + i * 1000ull);
      EXPECT_EQ(frames[k].wire_len, 1000u);
      got.push_back(i);
    }
  }
  EXPECT_TRUE(source->problems().empty()) << path;
  return got;
}

TEST(RotatingWriter, RingFileNamesPutTheNumberBeforeTheExtension) {
  EXPECT_EQ(RotatingWriter::ring_file_name("out/spine1.pcapng", 1), "out/spine1-0001.pcapng");
  EXPECT_EQ(RotatingWriter::ring_file_name("cap", 12), "cap-0012");
  EXPECT_EQ(RotatingWriter::ring_file_name("a.b/cap", 3), "a.b/cap-0003");
  EXPECT_EQ(RotatingWriter::ring_file_name(".hidden", 2), ".hidden-0002");
}

TEST(RotatingWriter, OneFileHoldsEveryFrame) {
  TempDir dir;
  RotatingWriter w(
      {.path = dir / "all.pcapng", .ring_files = 0, .file_bytes = 0, .snaplen = 128, .iface = {}});
  for (std::uint32_t i = 0; i < 500; ++i) w.write(1'000'000'000ull + i * 1000ull, frame(i), 1000);
  w.close({.captured = 500, .dropped_buffer = 0, .dropped_interface = 0}, 1, 2);
  ASSERT_EQ(w.files(), std::vector<std::string>{dir / "all.pcapng"});
  const std::vector<std::uint32_t> got = indices_in(dir / "all.pcapng");
  ASSERT_EQ(got.size(), 500u);
  for (std::uint32_t i = 0; i < 500; ++i) EXPECT_EQ(got[i], i);
}

TEST(RotatingWriter, RingKeepsTheNewestFilesAndDeletesTheRest) {
  TempDir dir;
  // Each record is 32 + 100 bytes: a 2000-byte limit starts the next file after 15 frames
  // (the headers push the first file's 15th frame past it).
  RotatingWriter w(
      {.path = dir / "ring.pcapng",
       .ring_files = 3,
       .file_bytes = 2000,
       .snaplen = 128,
       .iface = {.name = "veth9", .description = "", .bpf_filter = "", .speed_bps = 0}});
  const std::uint32_t total = 200;
  for (std::uint32_t i = 0; i < total; ++i) w.write(1'000'000'000ull + i * 1000ull, frame(i), 1000);
  w.close({.captured = total, .dropped_buffer = 0, .dropped_interface = 0}, 1, 2);

  ASSERT_EQ(w.files().size(), 3u);
  std::size_t on_disk = 0;
  for (const auto& entry : fs::directory_iterator(dir / "")) on_disk += entry.is_regular_file();
  EXPECT_EQ(on_disk, 3u) << "the deleted ring files are really gone";

  // The kept files hold the newest frames, contiguous and in order, ending with the last one.
  std::vector<std::uint32_t> kept;
  for (const std::string& f : w.files()) {
    const std::vector<std::uint32_t> part = indices_in(f);
    EXPECT_FALSE(part.empty()) << f;
    kept.insert(kept.end(), part.begin(), part.end());
  }
  ASSERT_FALSE(kept.empty());
  EXPECT_EQ(kept.back(), total - 1);
  for (std::size_t k = 1; k < kept.size(); ++k) EXPECT_EQ(kept[k], kept[k - 1] + 1);
  // Every file before the last was cut at the size limit: all files but the last one have the
  // same number of frames, and the deleted files account for the frames not kept.
  const std::size_t per_file = indices_in(w.files().front()).size();
  EXPECT_EQ(w.files_deleted() * per_file + kept.size(), total);
  EXPECT_EQ(w.files().back(),
            RotatingWriter::ring_file_name(dir / "ring.pcapng", w.files_deleted() + 3));
}

TEST(RotatingWriter, RingOptionsMustComeTogether) {
  TempDir dir;
  EXPECT_THROW(RotatingWriter({.path = dir / "x.pcapng",
                               .ring_files = 3,
                               .file_bytes = 0,
                               .snaplen = 128,
                               .iface = {}}),
               Error);
  EXPECT_THROW(RotatingWriter({.path = dir / "x.pcapng",
                               .ring_files = 0,
                               .file_bytes = 10,
                               .snaplen = 128,
                               .iface = {}}),
               Error);
  EXPECT_THROW(
      RotatingWriter({.path = "", .ring_files = 0, .file_bytes = 0, .snaplen = 128, .iface = {}}),
      Error);
  EXPECT_THROW(RotatingWriter({.path = dir / "no/such/dir/x.pcapng",
                               .ring_files = 0,
                               .file_bytes = 0,
                               .snaplen = 128,
                               .iface = {}}),
               Error);
}

}  // namespace
}  // namespace rocehil::capture
