#include "rocehil/capture/dpdk_source.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "addresses.hpp"
#include "rocehil/capture/analysis_json.hpp"
#include "rocehil/capture/analyzer.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/capture/mirror_builder.hpp"
#include "rocehil/capture/open_live_source.hpp"
#include "rocehil/capture/pcap_writer.hpp"
#include "rocehil/common/error.hpp"

// One process initialises DPDK's EAL once, so every device the tests use is created by one
// set of EAL arguments: an environment writes the capture files first (net_pcap opens them when
// the EAL probes it), then opens a port to bring the EAL up. Virtual devices only, with
// --no-huge --no-pci, so this runs on any machine with DPDK installed.

namespace rocehil::capture {
namespace {

using testing::doc_v6;
using testing::v4;
namespace fs = std::filesystem;

struct Record {
  std::uint64_t ts_ns;
  std::vector<std::uint8_t> bytes;
};

struct Copied {
  std::uint64_t ts_ns;
  std::uint32_t caplen;
  std::uint32_t wire_len;
  std::vector<std::uint8_t> bytes;
};

// RoCE writes and reads, CNPs, PFC and PAUSE, and frames that are none of these, from 60 bytes to
// a 9000-byte jumbo (which net_pcap splits over several mbufs).
std::vector<Record> sample_records() {
  std::vector<std::vector<std::uint8_t>> frames;
  for (std::uint32_t i = 0; i < 12; ++i) {
    RoceFrame w;
    w.bth.psn = 100 + i;
    w.bth.dest_qp = 0x101 + (i % 3);
    w.payload_size = std::array<std::uint32_t, 4>{0, 64, 1024, 4096}[i % 4];
    w.payload_fill = static_cast<std::uint8_t>(i);
    w.ecn = i % 5 == 0 ? 0b11 : 0b10;
    w.udp_src_port = static_cast<std::uint16_t>(49152 + i);
    frames.push_back(build(w));
  }
  RoceFrame tagged;
  tagged.vlans = {{0x8100, 5}};
  tagged.payload_size = 256;
  frames.push_back(build(tagged));
  RoceFrame v6;
  v6.src = doc_v6(1);
  v6.dst = doc_v6(2);
  v6.payload_size = 512;
  frames.push_back(build(v6));
  for (std::uint32_t qp : {0x101u, 0x102u, 0x101u})
    frames.push_back(build(cnp_frame(v4(198, 18, 0, 2), v4(198, 18, 0, 1), qp)));
  std::array<std::uint16_t, 8> xoff{};
  xoff[3] = 0xffff;
  frames.push_back(build_pfc(1u << 3, xoff));
  frames.push_back(build_pfc(1u << 3, std::array<std::uint16_t, 8>{}));  // XON
  frames.push_back(build_pause(0x100));
  RoceFrame other = RoceFrame{};
  std::vector<std::uint8_t> udp = build(other);
  udp[14 + 20 + 2] = 0x10;  // UDP destination port 4791 -> 0x10b7: not RoCE
  frames.push_back(udp);
  std::vector<std::uint8_t> small(60, 0x5a);  // an ARP-sized frame of something else
  small[12] = 0x08;
  small[13] = 0x06;
  frames.push_back(small);
  std::vector<std::uint8_t> jumbo(9000);
  for (std::size_t i = 0; i < jumbo.size(); ++i) jumbo[i] = static_cast<std::uint8_t>(i * 7);
  frames.push_back(jumbo);
  frames.push_back(build(cnp_frame(doc_v6(2), doc_v6(1), 0x103)));

  std::vector<Record> out;
  std::uint64_t ts = 1'700'000'000'000'000'000ull;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    ts += 1'000 * (1 + (i * 37) % 250);  // irregular gaps, whole microseconds
    out.push_back({ts, std::move(frames[i])});
  }
  return out;
}

class DpdkEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    char pattern[] = "/tmp/rocehil-dpdk-test-XXXXXX";
    const char* made = mkdtemp(pattern);
    ASSERT_NE(made, nullptr);
    dir_ = made;
    records_ = sample_records();
    us_file_ = dir_ + "/replay-us.pcap";
    ns_file_ = dir_ + "/replay-ns.pcap";
    {
      PcapWriter us(us_file_, FileFormat::pcap_us);
      for (const Record& r : records_) us.write(r.ts_ns, r.bytes);
      us.close();
      PcapWriter ns(ns_file_, FileFormat::pcap_ns);
      for (const Record& r : records_) ns.write(r.ts_ns + 123, r.bytes);  // below a microsecond
      ns.close();
    }
    // No -m: the backend's own default for --no-huge is under test.
    // The same frames as two spines' ERSPAN II sessions send them to a collector: session 5
    // carries each frame, session 6 (another spine) a copy of every other one.
    erspan_file_ = dir_ + "/replay-erspan.pcap";
    {
      PcapWriter w(erspan_file_, FileFormat::pcap_us);
      std::uint32_t sequence[2] = {0, 0};
      for (std::size_t i = 0; i < records_.size(); ++i)
        for (std::uint16_t session : {std::uint16_t{5}, std::uint16_t{6}}) {
          if (session == 6 && i % 2 == 1) continue;
          MirrorWrap m;
          m.session_id = session;
          m.src.bytes[15] = static_cast<std::uint8_t>(196 + session);
          m.sequence = sequence[session - 5]++;
          w.write(records_[i].ts_ns, wrap_mirror(m, records_[i].bytes));
        }
      w.close();
    }
    eal_args_ = "--no-huge --no-pci --vdev=net_pcap0,rx_pcap=" + us_file_ +
                " --vdev=net_pcap1,rx_pcap=" + ns_file_ +
                " --vdev=net_pcap2,rx_pcap=" + erspan_file_ +
                " --vdev=net_null0,size=100 --vdev=net_null1,no-rx=1";
    try {
      DpdkSourceOptions o;
      o.eal_args = eal_args_;
      o.port = "net_null1";
      DpdkSource::open(o).reset();
    } catch (const std::exception& e) {
      eal_failure_ = e.what();
    }
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  static inline std::string dir_, us_file_, ns_file_, erspan_file_, eal_args_, eal_failure_;
  static inline std::vector<Record> records_;
};

[[maybe_unused]] ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new DpdkEnvironment);

DpdkSourceOptions options(const std::string& port, std::uint32_t snaplen = 128) {
  DpdkSourceOptions o;
  o.eal_args = DpdkEnvironment::eal_args_;
  o.port = port;
  o.snaplen = snaplen;
  return o;
}

#define REQUIRE_EAL() \
  ASSERT_TRUE(DpdkEnvironment::eal_failure_.empty()) << DpdkEnvironment::eal_failure_

// Stops a source after `limit` unless disarmed, so a source that never ends fails the test
// instead of hanging it.
class Watchdog {
 public:
  Watchdog(LiveSource& source, std::chrono::milliseconds limit)
      : thread_([this, &source, limit] {
          std::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
            fired_ = true;
            source.stop();
          }
        }) {}
  ~Watchdog() { disarm(); }
  bool disarm() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    return fired_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

std::vector<Copied> read_all(FrameSource& source, std::size_t batch = 16) {
  std::vector<Copied> out;
  std::vector<Frame> frames(batch);
  for (;;) {
    const std::size_t n = source.next_batch(frames);
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) {
      const Frame& f = frames[i];
      EXPECT_EQ(f.link_type, link_type::ethernet);
      out.push_back({f.ts_ns, f.caplen, f.wire_len, {f.data, f.data + f.caplen}});
    }
  }
  return out;
}

TEST(DpdkReplay, DeliversTheFileFramesInOrderThenEnds) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_pcap0", 262144));
  Watchdog watchdog(*source, std::chrono::seconds(20));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Copied> got = read_all(*source, 7);  // batches that do not divide the burst
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(watchdog.disarm()) << "the replay did not end by itself";
  const std::vector<Record>& want = DpdkEnvironment::records_;
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].ts_ns, want[i].ts_ns);
    EXPECT_EQ(got[i].wire_len, want[i].bytes.size());
    EXPECT_EQ(got[i].caplen, want[i].bytes.size());
    EXPECT_EQ(got[i].bytes, want[i].bytes);
  }
  // The end is 100 ms of silence after the last frame; it must not take much longer.
  EXPECT_GE(took, std::chrono::milliseconds(100));
  EXPECT_LT(took, std::chrono::seconds(5));
  std::vector<Frame> frames(4);
  EXPECT_EQ(source->next_batch(frames), 0u) << "an ended source stays ended";
  const CaptureCounters c = source->counters();
  EXPECT_EQ(c.captured, want.size());
  EXPECT_EQ(c.dropped(), 0u);
  EXPECT_EQ(c.coverage(), 1.0);
  const InterfaceInfo& info = source->interface_info();
  EXPECT_EQ(info.name, "net_pcap0");
  EXPECT_EQ(info.description, "dpdk net_pcap");
  EXPECT_EQ(info.speed_bps, 0u) << "a virtual device's made-up 10G must not reach the analysis";
}

TEST(DpdkReplay, AnalysisEqualsTheFileReaderOnTheSameFile) {
  REQUIRE_EAL();
  for (const std::uint32_t snaplen : {128u, 262144u}) {
    SCOPED_TRACE(snaplen);
    Analyzer from_dpdk;
    {
      auto source = DpdkSource::open(options("net_pcap0", snaplen));
      Watchdog watchdog(*source, std::chrono::seconds(20));
      std::vector<Frame> frames(32);
      while (const std::size_t n = source->next_batch(frames))
        from_dpdk.add(std::span<const Frame>(frames.data(), n));
      EXPECT_FALSE(watchdog.disarm());
    }
    Analyzer from_file;
    auto file = FileSource::open(DpdkEnvironment::us_file_);
    std::vector<Frame> frames(32);
    while (const std::size_t n = file->next_batch(frames))
      from_file.add(std::span<const Frame>(frames.data(), n));
    const std::string a = to_json_text(from_dpdk.result());
    const std::string b = to_json_text(from_file.result());
    EXPECT_EQ(a, b);
    EXPECT_NE(a.find("\"flow_count\""), std::string::npos);
  }
}

// A collector's port receiving two spines' sessions: the capture point's session is taken, and
// `roce` keeps the RoCE, PFC and PAUSE frames inside the tunnel, as on a local mirror port.
TEST(DpdkReplay, ARemoteSessionIsTakenAndFilteredInsideTheTunnel) {
  REQUIRE_EAL();
  LiveSourceSpec spec;
  spec.backend = "dpdk";
  spec.iface = "net_pcap2";
  spec.dpdk_args = DpdkEnvironment::eal_args_;
  spec.filter = CaptureFilter::roce;
  spec.remote = RemoteSessionSpec{.session = 5, .source = v4(198, 19, 1, 201)};
  Analyzer remote;
  {
    auto source = open_live_source(spec);
    Watchdog watchdog(*source, std::chrono::seconds(20));
    std::vector<Frame> frames(32);
    while (const std::size_t n = source->next_batch(frames))
      remote.add(std::span<const Frame>(frames.data(), n));
    EXPECT_FALSE(watchdog.disarm());
  }
  Analyzer local;
  auto file = FileSource::open(DpdkEnvironment::us_file_);
  std::vector<Frame> frames(32);
  while (const std::size_t n = file->next_batch(frames))
    local.add(std::span<const Frame>(frames.data(), n));
  const Analysis r = remote.result();
  const Analysis l = local.result();
  // Everything but the UDP frame to another port, the ARP-sized frame and the jumbo.
  EXPECT_EQ(r.frames, l.frames - 3);
  EXPECT_EQ(r.roce.packets, l.roce.packets);
  EXPECT_EQ(r.roce.by_opcode, l.roce.by_opcode);
  EXPECT_EQ(r.cnp.by_dest_qp, l.cnp.by_dest_qp);
  EXPECT_EQ(r.pfc.frames, l.pfc.frames);
  EXPECT_EQ(r.pause_8023x.frames, l.pause_8023x.frames);
  ASSERT_EQ(r.flows.size(), l.flows.size());
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    EXPECT_EQ(r.flows[i].key, l.flows[i].key);
    EXPECT_EQ(r.flows[i].stats.bytes, l.flows[i].stats.bytes);
  }
  ASSERT_EQ(r.mirror.sessions.size(), 1u);
  EXPECT_EQ(r.mirror.sessions[0].id, 5u);
  // The frames the filter left out are gaps in the numbers this capture point saw, not losses
  // on the way: the session's coverage is judged over the whole of it (filter all).
  EXPECT_EQ(r.mirror.sessions[0].frames, r.frames);
}

TEST(DpdkReplay, SnapLengthCutsCaplenButNotTheWireLength) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_pcap0", 64));
  Watchdog watchdog(*source, std::chrono::seconds(20));
  const std::vector<Copied> got = read_all(*source);
  EXPECT_FALSE(watchdog.disarm());
  const std::vector<Record>& want = DpdkEnvironment::records_;
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    const auto expected_caplen = std::min<std::size_t>(64, want[i].bytes.size());
    EXPECT_EQ(got[i].caplen, expected_caplen);
    EXPECT_EQ(got[i].wire_len, want[i].bytes.size());
    EXPECT_TRUE(std::equal(got[i].bytes.begin(), got[i].bytes.end(), want[i].bytes.begin()));
  }
}

TEST(DpdkReplay, EachOpenOfThePortReplaysTheFileAgain) {
  REQUIRE_EAL();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    auto source = DpdkSource::open(options("net_pcap0"));
    Watchdog watchdog(*source, std::chrono::seconds(20));
    EXPECT_EQ(read_all(*source).size(), DpdkEnvironment::records_.size());
    EXPECT_FALSE(watchdog.disarm());
    EXPECT_EQ(source->counters().captured, DpdkEnvironment::records_.size());
  }
}

TEST(DpdkReplay, NanosecondFileComesBackTruncatedToTheMicrosecond) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_pcap1"));
  Watchdog watchdog(*source, std::chrono::seconds(20));
  const std::vector<Copied> got = read_all(*source);
  EXPECT_FALSE(watchdog.disarm());
  const std::vector<Record>& want = DpdkEnvironment::records_;
  ASSERT_EQ(got.size(), want.size());
  // The file holds ts + 123 ns; libpcap hands net_pcap microseconds, which drop the 123.
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].ts_ns, want[i].ts_ns) << i;
}

TEST(DpdkLive, StopFromAnotherThreadEndsAnEndlessSource) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_null0", 64));
  EXPECT_EQ(source->interface_info().description, "dpdk net_null");
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    source->stop();
  });
  const auto before =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::uint64_t delivered = 0;
  std::uint64_t last_ts = 0;
  bool lengths_ok = true;
  bool ts_ok = true;
  std::vector<Frame> frames(32);
  const auto start = std::chrono::steady_clock::now();
  while (const std::size_t n = source->next_batch(frames)) {
    delivered += n;
    for (std::size_t i = 0; i < n; ++i) {
      // net_null makes 100-byte frames; the snap length keeps 64 of them.
      lengths_ok = lengths_ok && frames[i].caplen == 64 && frames[i].wire_len == 100;
      // No hardware timestamps: the wall clock at each burst, never going back.
      ts_ok = ts_ok && frames[i].ts_ns >= before && frames[i].ts_ns >= last_ts;
      last_ts = frames[i].ts_ns;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) break;
  }
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_GT(delivered, 0u);
  EXPECT_TRUE(lengths_ok);
  EXPECT_TRUE(ts_ok);
  EXPECT_EQ(source->next_batch(frames), 0u);
  const CaptureCounters c = source->counters();
  EXPECT_EQ(c.captured, delivered);
  EXPECT_GE(c.coverage(), 0.0);
  EXPECT_LE(c.coverage(), 1.0);
}

TEST(DpdkLive, StopEndsAWaitOnAnIdlePort) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_null1"));  // no-rx: nothing ever arrives
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source->stop();
  });
  std::vector<Frame> frames(8);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(source->next_batch(frames), 0u);
  const auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  // A live port does not end by itself after 100 ms of silence, as a replay does.
  EXPECT_GE(took, std::chrono::milliseconds(250));
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(source->counters().captured, 0u);
  EXPECT_EQ(source->counters().coverage(), 1.0);
}

TEST(DpdkLive, StopBeforeTheFirstBatchEndsAtOnce) {
  REQUIRE_EAL();
  auto source = DpdkSource::open(options("net_null1"));
  source->stop();
  std::vector<Frame> frames(8);
  EXPECT_EQ(source->next_batch(frames), 0u);
}

// What `open` (DpdkSource::open or open_queues) refuses the options with.
template <typename Open = decltype(&DpdkSource::open)>
std::string open_error(const DpdkSourceOptions& o, Open open = &DpdkSource::open) {
  try {
    open(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DpdkOpen, AnUnknownPortIsRefusedWithTheListOfPorts) {
  REQUIRE_EAL();
  const std::string what = open_error(options("net_pcap9"));
  EXPECT_NE(what.find("net_pcap9"), std::string::npos) << what;
  for (const char* port : {"net_pcap0", "net_pcap1", "net_null0", "net_null1"})
    EXPECT_NE(what.find(port), std::string::npos) << what;
}

TEST(DpdkOpen, NoPortNameAmongSeveralPortsIsRefusedWithTheirNames) {
  REQUIRE_EAL();
  const std::string what = open_error(options(""));
  EXPECT_NE(what.find("5 ports"), std::string::npos) << what;
  EXPECT_NE(what.find("net_null1"), std::string::npos) << what;
}

TEST(DpdkOpen, OtherEalArgumentsAreRefusedBecauseTheEalInitialisesOnce) {
  REQUIRE_EAL();
  DpdkSourceOptions o = options("net_null0");
  o.eal_args += " --vdev=net_null7";
  const std::string what = open_error(o);
  EXPECT_NE(what.find("once per process"), std::string::npos) << what;
  // The same arguments with other spacing are the same arguments.
  o = options("net_null0");
  o.eal_args = "  " + o.eal_args + "\t";
  EXPECT_NO_THROW(DpdkSource::open(o));
}

TEST(DpdkOpen, HelpIsRefusedBecauseTheEalWouldExit) {
  DpdkSourceOptions o;
  o.eal_args = "--no-huge --help";
  const std::string what = open_error(o);
  EXPECT_NE(what.find("--help"), std::string::npos) << what;
}

TEST(DpdkOpen, ASecondSourceOnABusyPortIsRefused) {
  REQUIRE_EAL();
  auto first = DpdkSource::open(options("net_null1"));
  const std::string what = open_error(options("net_null1"));
  EXPECT_NE(what.find("already captures"), std::string::npos) << what;
  first.reset();
  EXPECT_NO_THROW(DpdkSource::open(options("net_null1")));
}

TEST(DpdkOpen, OptionsOutOfRangeAreRefused) {
  REQUIRE_EAL();
  EXPECT_NE(open_error(options("net_null0", 10)).find("--snaplen 10"), std::string::npos);
  DpdkSourceOptions o = options("net_null0");
  o.burst = 0;
  EXPECT_NE(open_error(o).find("burst"), std::string::npos);
  o = options("net_null0");
  o.mbufs = 100;
  EXPECT_NE(open_error(o).find("mbufs 100"), std::string::npos) << open_error(o);
  // A refused open leaves the port free.
  EXPECT_NO_THROW(DpdkSource::open(options("net_null0")));
}

// net_null offers RSS (flow_type_rss_offloads), so it takes several receive queues as a NIC does;
// its frames are made up, so what is tested is that every queue is read by its own source.
TEST(DpdkQueues, EachReceiveQueueIsReadByItsOwnSourceOnItsOwnThread) {
  REQUIRE_EAL();
  DpdkSourceOptions o = options("net_null0", 64);
  o.queues = 3;
  auto sources = DpdkSource::open_queues(o);
  ASSERT_EQ(sources.size(), 3u);
  std::vector<std::uint64_t> delivered(sources.size(), 0);
  std::vector<std::thread> readers;
  for (std::size_t q = 0; q < sources.size(); ++q)
    readers.emplace_back([&, q] {
      std::vector<Frame> frames(32);
      while (const std::size_t n = sources[q]->next_batch(frames)) delivered[q] += n;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (auto& s : sources) s->stop();
  for (auto& t : readers) t.join();
  for (std::size_t q = 0; q < sources.size(); ++q) {
    EXPECT_GT(delivered[q], 0u) << "queue " << q;
    EXPECT_EQ(sources[q]->counters().captured, delivered[q]) << "queue " << q;
    EXPECT_EQ(sources[q]->interface_info().name, "net_null0");
  }
  // The port is held while any of its queues' sources lives, and free once none does.
  sources.erase(sources.begin(), sources.begin() + 2);
  EXPECT_NE(open_error(options("net_null0")).find("already captures"), std::string::npos);
  sources.clear();
  EXPECT_NO_THROW(DpdkSource::open(options("net_null0")));
}

TEST(DpdkQueues, AReplayCannotBeSpreadOverQueues) {
  REQUIRE_EAL();
  DpdkSourceOptions o = options("net_pcap0");
  o.queues = 2;
  const std::string what = open_error(o, DpdkSource::open_queues);
  EXPECT_NE(what.find("--workers 2: net_pcap"), std::string::npos) << what;
  EXPECT_NE(what.find("rocehil analyze --workers 2"), std::string::npos) << what;
  o.queues = 0;
  EXPECT_NE(open_error(o, DpdkSource::open_queues).find("--workers 0: must be 1-256"),
            std::string::npos);
  // Refusals leave the port free.
  EXPECT_NO_THROW(DpdkSource::open(options("net_pcap0")));
}

TEST(DpdkOpen, TheBackendIsAvailable) {
  EXPECT_TRUE(dpdk_available());
}

TEST(DpdkOpen, WhetherTheBackendIsInstalledIsSeenWithoutLoadingIt) {
  EXPECT_TRUE(dpdk_installed());  // where dpdk_available() found it
  const char* before = std::getenv("ROCEHIL_DPDK_BACKEND");
  const std::string kept = before != nullptr ? before : "";
  ASSERT_EQ(setenv("ROCEHIL_DPDK_BACKEND", "/nonexistent/rocehil-dpdk.so", 1), 0);
  EXPECT_FALSE(dpdk_installed());
  if (before != nullptr)
    setenv("ROCEHIL_DPDK_BACKEND", kept.c_str(), 1);
  else
    unsetenv("ROCEHIL_DPDK_BACKEND");
}

}  // namespace
}  // namespace rocehil::capture
