#include "rocehil/common/scheduling.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rocehil {
namespace {

// The samples are this machine's /proc files, copied as they were (data/proc/README.md).
std::string sample(const std::string& name) {
  std::ifstream in(std::string(ROCEHIL_PROC_SAMPLES) + "/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ProcStat, ReadsTheAggregateLineCpusAndRunQueueOfARealSample) {
  const auto s = parse_proc_stat(sample("stat"));
  ASSERT_TRUE(s);
  // user nice system idle iowait irq softirq steal; guest columns are already in user.
  EXPECT_EQ(s->total_jiffies, 325398u);
  EXPECT_EQ(s->steal_jiffies, 1439u);
  EXPECT_EQ(s->cpus, 2u);
  EXPECT_EQ(s->procs_running, 7u);
}

TEST(ProcStat, RefusesTextWithoutTheAggregateLine) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("cpu0 1 2 3 4\nprocs_running 2\n"));
  EXPECT_FALSE(parse_proc_stat("cpu  1 2 x 4\ncpu0 1 2 3 4\n"));
}

TEST(ProcStat, AnOldKernelWithoutStealCountsNone) {
  const auto s = parse_proc_stat("cpu  10 0 5 100\ncpu0 10 0 5 100\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->total_jiffies, 115u);
  EXPECT_EQ(s->steal_jiffies, 0u);
  EXPECT_FALSE(s->procs_running);
}

TEST(LoadAvg, ReadsARealSample) {
  const auto l = parse_loadavg(sample("loadavg"));
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(l->load1, 2.29);
  EXPECT_EQ(l->running, 8u);
  EXPECT_EQ(l->tasks, 121u);
  EXPECT_FALSE(parse_loadavg("2.29 4.04 3.85 8 10876"));
  EXPECT_FALSE(parse_loadavg(""));
}

TEST(CpuPressure, ReadsTheSomeLineOfARealSample) {
  const auto p = parse_cpu_pressure(sample("pressure_cpu"));
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->some_avg10, 30.78);
  EXPECT_EQ(p->some_total_us, 1297586155u);
  // A kernel before 5.13 has no "full" line for the CPU; one without PSI has no file at all.
  EXPECT_TRUE(parse_cpu_pressure("some avg10=1.00 avg60=0.00 avg300=0.00 total=5\n"));
  EXPECT_FALSE(parse_cpu_pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"));
}

TEST(Schedstat, ReadsTheRunQueueWaitOfARealSample) {
  EXPECT_EQ(parse_schedstat_wait_ns(sample("schedstat")), 62064u);
  EXPECT_FALSE(parse_schedstat_wait_ns("12 34"));
}

TEST(WakeLateness, QuantilesAreWithinABucketOfTheTruth) {
  WakeLateness w;
  EXPECT_EQ(w.quantile_ns(0.99), 0);
  for (int i = 0; i < 98; ++i) w.add(20'000);  // 20 us
  w.add(2'900'000);                            // 2.9 ms
  w.add(5'000'000);
  EXPECT_EQ(w.count(), 100u);
  EXPECT_EQ(w.max_ns(), 5'000'000);
  EXPECT_GE(w.quantile_ns(0.5), 20'000);
  EXPECT_LE(w.quantile_ns(0.5), 20'000 * 1.1);
  EXPECT_GE(w.quantile_ns(0.99), 2'900'000);
  EXPECT_LE(w.quantile_ns(0.99), 2'900'000 * 1.1);
  EXPECT_EQ(w.quantile_ns(1.0), 5'000'000);
  w.add(-5);  // a clock that read early is on time
  EXPECT_EQ(w.count(), 101u);
}

TEST(SchedulingReport, DeltasOverTheWindowAndAbsentWhatTheKernelLacks) {
  SchedulingSnapshot before, after;
  before.monotonic_ns = 1'000'000'000;
  after.monotonic_ns = 3'000'000'000;  // a 2 s window
  before.stat = ProcStat{1000, 10, 2, 3};
  after.stat = ProcStat{1400, 110, 2, 7};
  before.pressure = CpuPressure{1.0, 5'000'000};
  after.pressure = CpuPressure{40.0, 5'500'000};
  before.loadavg = LoadAvg{1.0, 3, 100};
  after.loadavg = LoadAvg{3.5, 7, 100};
  before.thread_wait_ns = std::map<int, std::uint64_t>{{10, 1'000'000}, {11, 0}, {12, 5}};
  // 10 waited 600 ms more; 11 ended; 13 was born in the window and waited 50 ms.
  after.thread_wait_ns = std::map<int, std::uint64_t>{{10, 601'000'000}, {12, 5}, {13, 50'000'000}};
  WakeLateness w;
  w.add(3'000'000);
  const SchedulingReport r = scheduling_report(before, after, w, 9);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0);
  EXPECT_EQ(r.cpus, 2u);
  EXPECT_EQ(r.wakeups, 1u);
  EXPECT_DOUBLE_EQ(r.wake_late_max_us, 3000.0);
  ASSERT_TRUE(r.steal_share);
  EXPECT_DOUBLE_EQ(*r.steal_share, 0.25);
  ASSERT_TRUE(r.pressure_some_share);
  EXPECT_DOUBLE_EQ(*r.pressure_some_share, 0.25);
  EXPECT_DOUBLE_EQ(*r.pressure_some_avg10, 40.0);
  EXPECT_DOUBLE_EQ(*r.thread_wait_max_ms, 600.0);
  EXPECT_DOUBLE_EQ(*r.threads_wait_ms, 650.0);
  EXPECT_EQ(r.run_queue_max, 9u);
  EXPECT_DOUBLE_EQ(*r.load1, 3.5);

  const SchedulingReport bare =
      scheduling_report(SchedulingSnapshot{}, SchedulingSnapshot{}, WakeLateness{}, std::nullopt);
  EXPECT_FALSE(bare.steal_share);
  EXPECT_FALSE(bare.pressure_some_share);
  EXPECT_FALSE(bare.pressure_some_avg10);
  EXPECT_FALSE(bare.thread_wait_max_ms);
  EXPECT_FALSE(bare.run_queue_max);
  EXPECT_FALSE(bare.load1);
}

TEST(SchedulingSnapshot, AMissingPressureFileIsAbsent) {
  const std::string dir = ::testing::TempDir() + "/proc-without-psi";
  std::filesystem::create_directories(dir + "/self/task/1");
  std::ofstream(dir + "/stat") << sample("stat");
  std::ofstream(dir + "/loadavg") << sample("loadavg");
  std::ofstream(dir + "/self/task/1/schedstat") << sample("schedstat");
  const SchedulingSnapshot s = read_scheduling_snapshot(dir, "self");
  EXPECT_TRUE(s.stat);
  EXPECT_TRUE(s.loadavg);
  EXPECT_FALSE(s.pressure);
  ASSERT_TRUE(s.thread_wait_ns);
  EXPECT_EQ(s.thread_wait_ns->at(1), 62064u);
}

TEST(SchedulingProbe, AStoppedProbeReportsItsWindowAndANeverStartedOneNothing) {
  SchedulingProbe never;
  EXPECT_FALSE(never.stop());
  SchedulingProbe p;
  p.start();
  EXPECT_TRUE(p.running());
  const auto r = p.stop();
  ASSERT_TRUE(r);
  EXPECT_FALSE(p.running());
  EXPECT_GE(r->seconds, 0.0);
  EXPECT_GT(r->cpus, 0u);  // this machine has a /proc/stat
}

}  // namespace
}  // namespace rocehil
