// The lossless switch's shared counters: what the forwarding process counts into its mapping is
// what another mapping of the file (another process's too) reads, field by field; a file that
// is not one, or is cut short, is refused with its path.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "dataplane/shared_counters.hpp"
#include "rocehil/common/error.hpp"

namespace rocehil::testbed::dataplane {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "shared_counters_test";
  fs::create_directories(dir);
  const std::string path = dir + "/" + name;
  fs::remove(path);
  return path;
}

// Every counter of a port, in one order for the writer's side and the reader's: a field copied
// into the wrong place, or left out, reads back as another field's value.
std::vector<Counter*> counters_of(PortCounts& p) {
  std::vector<Counter*> out = {&p.ifindex,  &p.rx_packets, &p.rx_bytes,   &p.forwarded,
                               &p.no_route, &p.unresolved, &p.ttl_expired};
  for (auto& q : p.queue)
    for (Counter* c : {&q.packets, &q.bytes, &q.dropped, &q.dropped_bytes, &q.ecn_marked,
                       &q.depth_bytes, &q.peak_depth_bytes})
      out.push_back(c);
  for (auto& r : p.priority)
    for (Counter* c : {&r.pfc_sent, &r.pfc_received, &r.xon_sent, &r.xon_received, &r.paused_ns,
                       &r.ingress_bytes, &r.peak_ingress_bytes, &r.lossless_drops,
                       &r.storms_detected, &r.storms_restored, &r.storm_drops})
      out.push_back(c);
  out.push_back(&p.socket_drops);
  return out;
}

std::vector<std::uint64_t> values_of(const PortSnapshot& p) {
  std::vector<std::uint64_t> out = {p.ifindex,  p.rx_packets, p.rx_bytes,   p.forwarded,
                                    p.no_route, p.unresolved, p.ttl_expired};
  for (const auto& q : p.queue)
    for (auto v : {q.packets, q.bytes, q.dropped, q.dropped_bytes, q.ecn_marked, q.depth_bytes,
                   q.peak_depth_bytes})
      out.push_back(v);
  for (const auto& r : p.priority)
    for (auto v : {r.pfc_sent, r.pfc_received, r.xon_sent, r.xon_received, r.paused_ns,
                   r.ingress_bytes, r.peak_ingress_bytes, r.lossless_drops, r.storms_detected,
                   r.storms_restored, r.storm_drops})
      out.push_back(v);
  out.push_back(p.socket_drops);
  return out;
}

TEST(SharedCounters, TheReaderSeesEveryFieldTheWriterCounted) {
  const std::string path = temp_path("fields.counters");
  SharedCountersWriter w(path, {"t1-h1", "t1-s1", "t1-s2"});
  ASSERT_EQ(w.port_count(), 3);
  EXPECT_EQ(w.path(), path);
  std::uint64_t next = 1000;
  std::vector<std::vector<std::uint64_t>> expected;
  for (int port = 0; port < 3; ++port) {
    std::vector<std::uint64_t> written;
    for (Counter* c : counters_of(w.port(port))) {
      c->store(0);  // ifindex starts as the kernel's (0 here: no such interface)
      bump(*c, next);
      bump(*c);  // two bumps add up
      written.push_back(next + 1);
      next += 7;
    }
    expected.push_back(written);
  }
  const auto ports = read_shared_counters(path);
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].ifname, "t1-h1");
  EXPECT_EQ(ports[1].ifname, "t1-s1");
  EXPECT_EQ(ports[2].ifname, "t1-s2");
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(values_of(ports[i]), expected[i]) << i;
  EXPECT_EQ(values_of(ports[0]).size(), 7u + 8 * 7 + 8 * 11 + 1);
}

TEST(SharedCounters, ANewFileStartsAtZeroWithTheKernelsIfindex) {
  const std::string path = temp_path("zero.counters");
  const SharedCountersWriter w(path, {"lo", "a-name-of-15ch"});
  const auto ports = read_shared_counters(path);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].ifindex, 1u);  // lo is 1 in every namespace
  EXPECT_EQ(ports[1].ifindex, 0u);
  EXPECT_EQ(ports[1].ifname, "a-name-of-15ch");
  for (const auto& p : ports) {
    auto values = values_of(p);
    values.erase(values.begin());  // the ifindex
    EXPECT_EQ(values, std::vector<std::uint64_t>(values.size(), 0)) << p.ifname;
  }
  EXPECT_EQ(fs::file_size(path), shared_counters_size(2));
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
}

// Another process opens and maps the file itself and sees counts made after it started, through
// the writer's mapping, with nothing sent between them but "go".
TEST(SharedCounters, AnotherProcessReadsTheCountsAsTheyAreMade) {
  const std::string path = temp_path("forked.counters");
  SharedCountersWriter w(path, {"t1-h1", "t1-h2"});
  bump(w.port(1).priority[3].pfc_sent, 5);
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(go[1]);
    char byte = 0;
    if (::read(go[0], &byte, 1) != 1) ::_exit(10);
    try {
      const auto ports = read_shared_counters(path);
      if (ports.size() != 2 || ports[1].ifname != "t1-h2") ::_exit(11);
      if (ports[1].priority[3].pfc_sent != 5) ::_exit(12);
      if (ports[1].queue[3].ecn_marked != 42) ::_exit(13);  // counted after the fork
      if (ports[0].queue[3].ecn_marked != 0) ::_exit(14);
    } catch (...) {
      ::_exit(15);
    }
    ::_exit(0);
  }
  ::close(go[0]);
  bump(w.port(1).queue[3].ecn_marked, 42);
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no go, 11: ports, 12: pfc_sent, 13: ecn_marked after "
                                       "the fork, 14: the wrong port, 15: it threw";
}

TEST(SharedCounters, AWriterReplacesTheFileAndLeavesItBehind) {
  const std::string path = temp_path("replaced.counters");
  {
    SharedCountersWriter first(path, {"t1-h1", "t1-h2"});
    bump(first.port(0).rx_packets, 9);
    SharedCountersWriter second(path, {"t1-s1"});  // a restarted process
    // The first one's mapping is of the old file, which nobody can open any more.
    bump(first.port(0).rx_packets, 9);
    const auto ports = read_shared_counters(path);
    ASSERT_EQ(ports.size(), 1u);
    EXPECT_EQ(ports[0].ifname, "t1-s1");
    EXPECT_EQ(ports[0].rx_packets, 0u);
    bump(second.port(0).rx_packets, 3);
  }
  const auto left = read_shared_counters(path);  // both are gone: the last counts stay
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rx_packets, 3u);
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(entry.path().string().find(".new"), std::string::npos) << entry.path();
}

TEST(SharedCounters, AMovedWriterKeepsItsMapping) {
  const std::string path = temp_path("moved.counters");
  SharedCountersWriter a(path, {"t1-h1"});
  SharedCountersWriter b(std::move(a));
  bump(b.port(0).forwarded, 4);
  SharedCountersWriter c(temp_path("other.counters"), {"x"});
  c = std::move(b);
  bump(c.port(0).forwarded, 4);
  EXPECT_EQ(c.path(), path);
  EXPECT_EQ(read_shared_counters(path)[0].forwarded, 8u);
}

TEST(SharedCounters, AnInterfaceNameTooLongForTheKernelIsRefused) {
  const std::string path = temp_path("long.counters");
  try {
    SharedCountersWriter w(path, {"t1-h1", "sixteen-chars-xx"});
    FAIL() << "accepted a 16-character name";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("sixteen-chars-xx"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path));
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message names the file and says what is wrong with it.
void expect_refused(const std::string& path, const std::string& why) {
  try {
    read_shared_counters(path);
    FAIL() << "read " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::infrastructure);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(SharedCounters, AMissingShortOrForeignFileIsRefusedWithItsPath) {
  expect_refused(temp_path("missing.counters"), "No such file");
  const std::string short_file = temp_path("short.counters");
  write_bytes(short_file, "RHILCNTS");
  expect_refused(short_file, "shorter than");
  const std::string foreign = temp_path("foreign.counters");
  write_bytes(foreign, std::string(4096, 'x'));
  expect_refused(foreign, "magic");

  // A real file cut after its header: the ports it announces are not there.
  const std::string cut = temp_path("cut.counters");
  { const SharedCountersWriter w(cut, {"a", "b"}); }
  fs::resize_file(cut, shared_counters_size(2) - 1);
  expect_refused(cut, "cut short");

  // Another layout: an older or newer rocehil's file.
  const std::string other = temp_path("other-layout.counters");
  { const SharedCountersWriter w(other, {"a"}); }
  std::string bytes(shared_counters_size(1), '\0');
  std::ifstream(other, std::ios::binary).read(bytes.data(), static_cast<long>(bytes.size()));
  SharedCountersHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  header.version = shared_counters_version + 1;
  std::memcpy(bytes.data(), &header, sizeof header);
  write_bytes(other, bytes);
  expect_refused(other, "layout");
}

TEST(SharedCounters, EachSwitchHasItsFileInThePublicRunDirectory) {
  EXPECT_EQ(shared_counters_path("rocehil-ab1-l1"), "/run/rocehil/rocehil-ab1-l1.counters");
}

}  // namespace
}  // namespace rocehil::testbed::dataplane
