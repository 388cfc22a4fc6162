#include "rocehil/testbed/relay_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace rocehil::testbed {
namespace {

class CountersFile : public ::testing::Test {
 protected:
  std::string path = (std::filesystem::temp_directory_path() /
                      ("rocehil-relay-test-" + std::to_string(::getpid()) + ".json"))
                         .string();
  void TearDown() override { std::filesystem::remove(path); }
};

TEST_F(CountersFile, RoundTrip) {
  RelayCounters c;
  c.frames = 1'000'000'000'000;
  c.bytes = 7;
  c.truncated = 3;
  c.dropped = 2;
  c.send_errors = 1;
  c.unknown_port = 4;
  c.next_sequence = 0xffffffff;
  c.frame_bytes_kept = 1452;
  c.last_errno = EMSGSIZE;
  c.written_at_ns = 1'700'000'000'123'456'789;
  ASSERT_TRUE(write_relay_counters(path, c));
  const auto back = read_relay_counters(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->frames, c.frames);
  EXPECT_EQ(back->bytes, 7u);
  EXPECT_EQ(back->truncated, 3u);
  EXPECT_EQ(back->dropped, 2u);
  EXPECT_EQ(back->send_errors, 1u);
  EXPECT_EQ(back->unknown_port, 4u);
  EXPECT_EQ(back->next_sequence, 0xffffffffu);
  EXPECT_EQ(back->frame_bytes_kept, 1452u);
  EXPECT_EQ(back->last_errno, EMSGSIZE);
  EXPECT_EQ(back->written_at_ns, c.written_at_ns);
  EXPECT_TRUE(to_json(c)["last_error"].is_string());
  EXPECT_TRUE(to_json(RelayCounters{})["last_error"].is_null());
}

TEST_F(CountersFile, MissingOrDamagedIsNone) {
  EXPECT_FALSE(read_relay_counters(path));
  std::ofstream(path) << "{\"frames\": 1";
  EXPECT_FALSE(read_relay_counters(path));
}

}  // namespace
}  // namespace rocehil::testbed
