#pragma once

// What bends timing numbers on a host: how long a process's threads waited for a CPU, how late a
// sleeping thread woke, the CPU time a hypervisor stole, and how many tasks queued for the CPUs.
// A latency of 3.3 ms one minute and 32 us the next on the same path is the scheduler's, not the
// fabric's, when the agent that timed it was waiting for a CPU: these numbers let a run say so.
//
// The parsers are pure functions of the kernel's text (/proc/stat, /proc/loadavg,
// /proc/pressure/cpu, /proc/PID/task/TID/schedstat); the probe reads those files at the start
// and end of a window and wakes a thread every millisecond between them. A value the kernel does
// not provide (no PSI file, schedstats off) is absent, never 0.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace rocehil {

// ---- parsers ----

// /proc/stat: the aggregate "cpu" line's jiffies, how many "cpuN" lines there are, and
// procs_running (tasks runnable now, all CPUs).
struct ProcStat {
  std::uint64_t total_jiffies = 0;  // every column of the "cpu" line (guest is counted in user)
  std::uint64_t steal_jiffies = 0;  // column 8; absent on kernels before 2.6.11: 0
  std::uint32_t cpus = 0;
  std::optional<std::uint32_t> procs_running;
};
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/loadavg: "2.29 4.04 3.85 6/114 10785".
struct LoadAvg {
  double load1 = 0;
  std::uint32_t running = 0;  // runnable tasks now (the kernel's nr_running)
  std::uint32_t tasks = 0;
};
std::optional<LoadAvg> parse_loadavg(std::string_view text);

// /proc/pressure/cpu's "some" line: the share of time at least one task waited for a CPU.
struct CpuPressure {
  double some_avg10 = 0;            // percent, over the last 10 s
  std::uint64_t some_total_us = 0;  // cumulative stall
};
std::optional<CpuPressure> parse_cpu_pressure(std::string_view text);

// /proc/.../schedstat: "on-CPU ns, run-queue wait ns, timeslices"; the wait.
std::optional<std::uint64_t> parse_schedstat_wait_ns(std::string_view text);

// ---- how late a thread woke ----

// Lateness of timed wake-ups in fixed buckets (eight per octave from 1 us, so a percentile is
// within 9% of the truth), so recording allocates nothing.
class WakeLateness {
 public:
  void add(std::int64_t late_ns) noexcept;
  std::uint64_t count() const noexcept { return count_; }
  std::int64_t max_ns() const noexcept { return max_ns_; }
  // The bucket's upper edge holding quantile q (0..1), capped at the largest seen; 0 when empty.
  std::int64_t quantile_ns(double q) const noexcept;

 private:
  static constexpr int per_octave = 8;
  static constexpr std::size_t buckets = 2 + per_octave * 26;  // < 1 us .. ~67 s
  static std::size_t bucket_of(std::int64_t ns) noexcept;
  static std::int64_t upper_ns(std::size_t bucket) noexcept;
  std::array<std::uint64_t, buckets> counts_{};
  std::uint64_t count_ = 0;
  std::int64_t max_ns_ = 0;
};

// ---- one window ----

// The files' state at one moment; a file the kernel lacks leaves its part absent.
struct SchedulingSnapshot {
  std::int64_t monotonic_ns = 0;
  std::optional<ProcStat> stat;
  std::optional<CpuPressure> pressure;
  std::optional<LoadAvg> loadavg;
  // Run-queue wait of each of the process's threads (by TID); absent when schedstats are off.
  std::optional<std::map<int, std::uint64_t>> thread_wait_ns;
};

// What one process saw of its host's CPUs over a window (a case's traffic).
struct SchedulingReport {
  double seconds = 0;
  std::uint32_t cpus = 0;  // 0 when /proc/stat could not be read
  // A thread that slept 1 ms at a time: how many times it woke, and how late.
  std::uint64_t wakeups = 0;
  double wake_late_p50_us = 0, wake_late_p99_us = 0, wake_late_max_us = 0;
  // The run-queue wait of the thread that waited most, and of all threads together, over the
  // window (threads alive at both ends); absent without schedstats.
  std::optional<double> thread_wait_max_ms;
  std::optional<double> threads_wait_ms;
  // CPU time stolen by a hypervisor, as a share of all CPUs' time over the window.
  std::optional<double> steal_share;
  // PSI: the share of the window some task waited for a CPU, and avg10 at its end (percent).
  std::optional<double> pressure_some_share;
  std::optional<double> pressure_some_avg10;
  // Runnable tasks on the host, the most seen (sampled every 100 ms) and the 1-minute load.
  std::optional<std::uint32_t> run_queue_max;
  std::optional<double> load1;
};

// The report of a window from its two ends and the wake-ups between them. Pure.
SchedulingReport scheduling_report(const SchedulingSnapshot& before,
                                   const SchedulingSnapshot& after, const WakeLateness& wakes,
                                   std::optional<std::uint32_t> run_queue_max);

// Reads the files under `proc` ("/proc") for process `pid` ("self"). Never throws: what cannot
// be read is absent.
SchedulingSnapshot read_scheduling_snapshot(const std::string& proc = "/proc",
                                            const std::string& pid = "self");

// Measures the calling process over a window: start() snapshots and starts a thread that sleeps
// 1 ms at a time (timer slack 1 ns) and samples the run queue every 100 ms; stop() ends it and
// gives the report. The thread does its own work only: nothing is added to a hot path.
class SchedulingProbe {
 public:
  SchedulingProbe() = default;
  SchedulingProbe(const SchedulingProbe&) = delete;
  SchedulingProbe& operator=(const SchedulingProbe&) = delete;
  ~SchedulingProbe();

  void start();
  bool running() const noexcept { return thread_.joinable(); }
  // The window since start(); a probe never started gives nothing.
  std::optional<SchedulingReport> stop();

 private:
  void loop();
  SchedulingSnapshot before_;
  WakeLateness wakes_;
  std::optional<std::uint32_t> run_queue_max_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace rocehil
