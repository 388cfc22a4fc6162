#include "rocehil/capture/pause_injector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "hex.hpp"
#include "rocehil/common/error.hpp"

// The parts of the injector that need no interface and no root: option checks, the schedule, the
// frames, and the refusal of an interface that does not exist. Sending is tested on veth pairs by
// harness/cli/tests/system/inject_cli_test.py against tcpdump, tshark and the kernel's counters.

namespace rocehil::capture {
namespace {

using testing::from_hex;

InjectOptions good_pfc() {
  InjectOptions o;
  o.iface = "eth0";
  o.priorities = {3};
  return o;
}

// The message validate() throws for `o`, or "" when it accepts them.
std::string rejection(const InjectOptions& o) {
  try {
    validate(o);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input) << e.what();
    return e.what();
  }
  return "";
}

TEST(PauseInjectorValidate, AcceptsGoodOptions) {
  EXPECT_EQ(rejection(good_pfc()), "");
  InjectOptions all = good_pfc();
  all.priorities = {0, 1, 2, 3, 4, 5, 6, 7};
  all.quanta = 0;
  all.pps = 10'000'000;
  all.src_mac = MacAddress{0x02, 0, 0, 0, 0, 0x10};
  EXPECT_EQ(rejection(all), "");
  InjectOptions pause = good_pfc();
  pause.pause_8023x = true;
  pause.priorities.clear();  // PAUSE has no priorities
  EXPECT_EQ(rejection(pause), "");
  InjectOptions counted = good_pfc();
  counted.count = 777;
  counted.duration_s = 0;  // ignored when a count is given
  EXPECT_EQ(rejection(counted), "");
}

TEST(PauseInjectorValidate, RejectsEachBadFieldNamingTheOption) {
  struct Case {
    std::function<void(InjectOptions&)> spoil;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](InjectOptions& o) { o.iface.clear(); },
       "--iface: name the interface to send the frames out of"},
      {[](InjectOptions& o) { o.priorities.clear(); },
       "--priority: name at least one PFC priority to pause (0-7), e.g. --priority 3 or "
       "--priority 3,4"},
      {[](InjectOptions& o) {
         o.priorities = {3, 9};
       },
       "--priority 9: PFC priorities are 0-7"},
      {[](InjectOptions& o) { o.pps = 0; },
       "--pps 0: give a rate above 0 frames per second (at most 10,000,000)"},
      {[](InjectOptions& o) { o.pps = -5; },
       "--pps -5: give a rate above 0 frames per second (at most 10,000,000)"},
      {[](InjectOptions& o) { o.pps = std::numeric_limits<double>::quiet_NaN(); },
       "--pps nan: give a rate above 0 frames per second (at most 10,000,000)"},
      {[](InjectOptions& o) { o.pps = 20'000'000; },
       "--pps 20000000: at most 10,000,000 frames per second"},
      {[](InjectOptions& o) { o.duration_s = 0; },
       "--duration 0: give seconds above 0, or --count N for a number of frames"},
      {[](InjectOptions& o) { o.duration_s = 1e9; },
       "--duration 1000000000: at most a year (31536000 s)"},
      {[](InjectOptions& o) {
         o.pps = 1;
         o.duration_s = 0.1;
       },
       "--duration 0.1 at --pps 1 is less than one frame; send for longer, faster, or give "
       "--count"},
      {[](InjectOptions& o) { o.count = 0; }, "--count 0: give at least one frame to send"},
      {[](InjectOptions& o) { o.src_mac = MacAddress{0x01, 0x80, 0xc2, 0, 0, 0x01}; },
       "--src-mac 01:80:c2:00:00:01: a source address must be unicast (the lowest bit of its "
       "first byte clear)"},
  };
  for (const auto& c : cases) {
    InjectOptions o = good_pfc();
    c.spoil(o);
    EXPECT_EQ(rejection(o), c.message);
  }
}

TEST(PauseInjectorValidate, PauseIgnoresPriorities) {
  InjectOptions o = good_pfc();
  o.pause_8023x = true;
  o.priorities = {9};
  EXPECT_EQ(rejection(o), "");
}

TEST(PauseInjector, NonExistentInterfaceIsBadInputNamingIt) {
  InjectOptions o = good_pfc();
  o.iface = "rhinj-nope0";
  std::atomic<bool> stop{false};
  try {
    inject_pause_frames(o, stop);
    FAIL() << "sent on an interface that does not exist";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "interface 'rhinj-nope0' does not exist (see 'ip link show')");
    EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
  }
}

TEST(PauseInjector, BadOptionsAreReportedBeforeTheInterface) {
  InjectOptions o = good_pfc();
  o.iface = "rhinj-nope0";
  o.priorities = {8};
  std::atomic<bool> stop{false};
  try {
    inject_pause_frames(o, stop);
    FAIL() << "accepted priority 8";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--priority 8: PFC priorities are 0-7");
  }
}

TEST(PauseInjectorSchedule, FramesToSendFromRateAndDurationOrCount) {
  InjectOptions o = good_pfc();
  o.pps = 2000;
  o.duration_s = 0.5;
  EXPECT_EQ(frames_to_send(o), 1000u);
  o.pps = 3;
  o.duration_s = 1.4;  // 4.2 frames: rounded
  EXPECT_EQ(frames_to_send(o), 4u);
  o.count = 777;
  EXPECT_EQ(frames_to_send(o), 777u);
}

TEST(PauseInjectorSchedule, FrameIIsDueAtIOverPps) {
  EXPECT_EQ(scheduled_offset_ns(0, 2000), 0);
  EXPECT_EQ(scheduled_offset_ns(1, 2000), 500'000);
  EXPECT_EQ(scheduled_offset_ns(999, 2000), 499'500'000);
  EXPECT_EQ(scheduled_offset_ns(1, 3), 333'333'334);  // rounded up: never early
  EXPECT_EQ(scheduled_offset_ns(3, 3), 1'000'000'000);
  EXPECT_EQ(scheduled_offset_ns(10'000'000, 10'000'000), 1'000'000'000);

  EXPECT_EQ(frames_due(-1, 2000, 1000), 0u);  // before the start
  EXPECT_EQ(frames_due(0, 2000, 1000), 1u);   // the first frame goes at once
  EXPECT_EQ(frames_due(499'999, 2000, 1000), 1u);
  EXPECT_EQ(frames_due(500'000, 2000, 1000), 2u);
  EXPECT_EQ(frames_due(250'000'000, 2000, 1000), 501u);
  EXPECT_EQ(frames_due(499'500'000, 2000, 1000), 1000u);
  EXPECT_EQ(frames_due(3'600'000'000'000, 2000, 1000), 1000u);  // never more than the total
  EXPECT_EQ(frames_due(0, 2000, 0), 0u);
}

TEST(PauseInjectorSchedule, DueCountAndOffsetsAgreeAtEveryFrame) {
  // The send loop sleeps until scheduled_offset_ns(next) and then asks frames_due: at that
  // instant the frame must be due, and one ns earlier it must not be, or the loop would spin.
  const std::uint64_t total = 10'000;
  for (const double pps : {0.3, 1.0, 3.0, 7.0, 1000.0, 1234.5, 2000.0, 999'983.0, 10'000'000.0}) {
    for (std::uint64_t i = 0; i < total; ++i) {
      const std::int64_t at = scheduled_offset_ns(i, pps);
      ASSERT_EQ(frames_due(at, pps, total), i + 1) << "pps " << pps << " frame " << i;
      ASSERT_EQ(frames_due(at - 1, pps, total), i) << "pps " << pps << " frame " << i;
    }
  }
}

TEST(PauseInjectorSchedule, LateFramesAreThoseDueMoreThanAPeriodBefore) {
  // The loop counts as late the frames whose offset is <= now - period - 1: at 1000 pps, at
  // t = 10.5 ms, frames 0-9 are due and 0-8 are more than 1 ms late.
  const std::int64_t now = 10'500'000, period = 1'000'000;
  EXPECT_EQ(frames_due(now, 1000, 100), 11u);
  EXPECT_EQ(frames_due(now - period - 1, 1000, 100), 10u);
}

TEST(PauseInjectorFrame, PfcCarriesTheListedClassesAndQuanta) {
  InjectOptions o = good_pfc();
  o.priorities = {3, 4};
  o.quanta = 0x1234;
  const MacAddress src{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
  // dst 01:80:c2:00:00:01, src, EtherType 0x8808, opcode 0x0101, class-enable 0x0018, quanta
  // c0..c7 (c3 and c4 = 0x1234), zero padding to the 60-byte minimum (FCS excluded).
  const std::string header = "0180c200000102aabbccddee88080101";
  const std::string padding(2 * 26, '0');
  EXPECT_EQ(pause_frame(o, src, false),
            from_hex(header + "0018" + "000000000000" + "12341234" + "000000000000" + padding));
  EXPECT_EQ(pause_frame(o, src, true), from_hex(header + "0018" + std::string(32, '0') + padding));
  EXPECT_EQ(pause_frame(o, src, false).size(), 60u);
}

TEST(PauseInjectorFrame, PauseIsOpcodeOneWithOneQuanta) {
  InjectOptions o = good_pfc();
  o.pause_8023x = true;
  o.quanta = 0xffff;
  const MacAddress src{0x02, 0, 0, 0, 0, 0x10};
  const std::string header = "0180c200000102000000001088080001";
  EXPECT_EQ(pause_frame(o, src, false), from_hex(header + "ffff" + std::string(2 * 42, '0')));
  EXPECT_EQ(pause_frame(o, src, true), from_hex(header + "0000" + std::string(2 * 42, '0')));
}

}  // namespace
}  // namespace rocehil::capture
