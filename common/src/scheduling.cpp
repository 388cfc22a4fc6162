#include "rocehil/common/scheduling.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "rocehil/common/clock.hpp"

namespace rocehil {
namespace {

// The whitespace-separated words of one line.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <class T>
std::optional<T> number(std::string_view word) {
  T value{};
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(s).str();
}

double us(std::int64_t ns) {
  return static_cast<double>(ns) / 1e3;
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat s;
  bool aggregate = false;
  for_each_line(text, [&](std::string_view line) {
    const auto w = words_of(line);
    if (w.empty()) return;
    if (w[0] == "cpu") {
      std::uint64_t total = 0;
      for (std::size_t i = 1; i < w.size(); ++i) {
        const auto v = number<std::uint64_t>(w[i]);
        if (!v) return;
        // guest and guest_nice (columns 9, 10) are already counted in user and nice.
        if (i <= 8) total += *v;
        if (i == 8) s.steal_jiffies = *v;
      }
      if (w.size() < 5) return;  // user nice system idle at least
      s.total_jiffies = total;
      aggregate = true;
    } else if (w[0].starts_with("cpu") && number<unsigned>(w[0].substr(3))) {
      ++s.cpus;
    } else if (w[0] == "procs_running" && w.size() == 2) {
      s.procs_running = number<std::uint32_t>(w[1]);
    }
  });
  if (!aggregate || s.cpus == 0) return std::nullopt;
  return s;
}

std::optional<LoadAvg> parse_loadavg(std::string_view text) {
  const auto w = words_of(text.substr(0, text.find('\n')));
  if (w.size() < 4) return std::nullopt;
  LoadAvg l;
  const auto slash = w[3].find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto running = number<std::uint32_t>(w[3].substr(0, slash));
  const auto tasks = number<std::uint32_t>(w[3].substr(slash + 1));
  // from_chars for double is exact and locale-free.
  const auto load1 = number<double>(w[0]);
  if (!running || !tasks || !load1) return std::nullopt;
  l.load1 = *load1;
  l.running = *running;
  l.tasks = *tasks;
  return l;
}

std::optional<CpuPressure> parse_cpu_pressure(std::string_view text) {
  std::optional<CpuPressure> out;
  for_each_line(text, [&](std::string_view line) {
    const auto w = words_of(line);
    if (w.empty() || w[0] != "some") return;
    std::optional<double> avg10;
    std::optional<std::uint64_t> total;
    for (std::size_t i = 1; i < w.size(); ++i) {
      if (w[i].starts_with("avg10=")) avg10 = number<double>(w[i].substr(6));
      if (w[i].starts_with("total=")) total = number<std::uint64_t>(w[i].substr(6));
    }
    if (avg10 && total) out = CpuPressure{*avg10, *total};
  });
  return out;
}

std::optional<std::uint64_t> parse_schedstat_wait_ns(std::string_view text) {
  const auto w = words_of(text.substr(0, text.find('\n')));
  if (w.size() < 3) return std::nullopt;
  return number<std::uint64_t>(w[1]);
}

// Bucket 0: under 1 us; bucket 1 + k: [1 us x 2^(k/8), 1 us x 2^((k+1)/8)); the last takes the
// rest.
std::size_t WakeLateness::bucket_of(std::int64_t ns) noexcept {
  if (ns < 1000) return 0;
  const double k = std::floor(std::log2(static_cast<double>(ns) / 1000.0) * per_octave);
  return std::min<std::size_t>(buckets - 1, 1 + static_cast<std::size_t>(k));
}

std::int64_t WakeLateness::upper_ns(std::size_t bucket) noexcept {
  if (bucket == 0) return 1000;
  return static_cast<std::int64_t>(
      std::ceil(1000.0 * std::exp2(static_cast<double>(bucket) / per_octave)));
}

void WakeLateness::add(std::int64_t late_ns) noexcept {
  late_ns = std::max<std::int64_t>(0, late_ns);
  ++counts_[bucket_of(late_ns)];
  ++count_;
  max_ns_ = std::max(max_ns_, late_ns);
}

std::int64_t WakeLateness::quantile_ns(double q) const noexcept {
  if (count_ == 0) return 0;
  // The rank of the q-quantile, 1-based: the smallest value with at least q of them at or below.
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) return std::min(upper_ns(b), max_ns_);
  }
  return max_ns_;
}

SchedulingReport scheduling_report(const SchedulingSnapshot& before,
                                   const SchedulingSnapshot& after, const WakeLateness& wakes,
                                   std::optional<std::uint32_t> run_queue_max) {
  SchedulingReport r;
  const std::int64_t window_ns =
      std::max<std::int64_t>(0, after.monotonic_ns - before.monotonic_ns);
  r.seconds = static_cast<double>(window_ns) / 1e9;
  r.wakeups = wakes.count();
  r.wake_late_p50_us = us(wakes.quantile_ns(0.5));
  r.wake_late_p99_us = us(wakes.quantile_ns(0.99));
  r.wake_late_max_us = us(wakes.max_ns());
  if (after.stat) r.cpus = after.stat->cpus;
  if (before.stat && after.stat && after.stat->total_jiffies > before.stat->total_jiffies) {
    const auto total = after.stat->total_jiffies - before.stat->total_jiffies;
    const auto steal = after.stat->steal_jiffies >= before.stat->steal_jiffies
                           ? after.stat->steal_jiffies - before.stat->steal_jiffies
                           : 0;
    r.steal_share = static_cast<double>(steal) / static_cast<double>(total);
  }
  if (before.pressure && after.pressure && window_ns > 0) {
    const auto stall_us = after.pressure->some_total_us >= before.pressure->some_total_us
                              ? after.pressure->some_total_us - before.pressure->some_total_us
                              : 0;
    r.pressure_some_share =
        std::min(1.0, static_cast<double>(stall_us) * 1e3 / static_cast<double>(window_ns));
    r.pressure_some_avg10 = after.pressure->some_avg10;
  }
  // Threads alive at the end: one born in the window waited all its wait in it (a traffic
  // thread started with the work); one gone before the end has no end to count from.
  if (before.thread_wait_ns && after.thread_wait_ns) {
    std::uint64_t most = 0, all = 0;
    for (const auto& [tid, wait] : *after.thread_wait_ns) {
      const auto was = before.thread_wait_ns->find(tid);
      const std::uint64_t from = was == before.thread_wait_ns->end() ? 0 : was->second;
      if (wait < from) continue;
      most = std::max(most, wait - from);
      all += wait - from;
    }
    r.thread_wait_max_ms = static_cast<double>(most) / 1e6;
    r.threads_wait_ms = static_cast<double>(all) / 1e6;
  }
  std::optional<std::uint32_t> queue = run_queue_max;
  for (const auto* s : {&before, &after}) {
    if (s->loadavg) queue = std::max(queue.value_or(0), s->loadavg->running);
  }
  r.run_queue_max = queue;
  if (after.loadavg) r.load1 = after.loadavg->load1;
  return r;
}

SchedulingSnapshot read_scheduling_snapshot(const std::string& proc, const std::string& pid) {
  SchedulingSnapshot s;
  s.monotonic_ns = monotonic_ns();
  if (const auto t = read_text(proc + "/stat")) s.stat = parse_proc_stat(*t);
  if (const auto t = read_text(proc + "/pressure/cpu")) s.pressure = parse_cpu_pressure(*t);
  if (const auto t = read_text(proc + "/loadavg")) s.loadavg = parse_loadavg(*t);
  std::error_code ec;
  const std::filesystem::path tasks = std::filesystem::path(proc) / pid / "task";
  std::map<int, std::uint64_t> waits;
  bool any = false;
  for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto tid = number<int>(name);
    if (!tid) continue;
    const auto text = read_text((it->path() / "schedstat").string());
    if (!text) continue;  // schedstats off, or the thread has just ended
    if (const auto wait = parse_schedstat_wait_ns(*text)) {
      waits[*tid] = *wait;
      any = true;
    }
  }
  if (any) s.thread_wait_ns = std::move(waits);
  return s;
}

SchedulingProbe::~SchedulingProbe() {
  stop();
}

void SchedulingProbe::start() {
  stop();
  wakes_ = WakeLateness{};
  run_queue_max_.reset();
  stopping_ = false;
  before_ = read_scheduling_snapshot();
  thread_ = std::thread([this] { loop(); });
}

void SchedulingProbe::loop() {
  // Without this the kernel may defer the wake-up by its default 50 us slack, which would read
  // as scheduling delay on an idle host.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  constexpr std::int64_t period_ns = 1'000'000;
  std::int64_t next = monotonic_ns() + period_ns;
  for (std::uint64_t tick = 0; !stopping_.load(std::memory_order_relaxed); ++tick) {
    const timespec at{static_cast<time_t>(next / 1'000'000'000),
                      static_cast<long>(next % 1'000'000'000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
    }
    const std::int64_t now = monotonic_ns();
    wakes_.add(now - next);
    // A wake-up later than the next one was due does not queue a burst of on-time ones.
    next += period_ns;
    if (next <= now) next = now + period_ns;
    if (tick % 100 == 0)
      if (const auto t = read_text("/proc/loadavg"))
        if (const auto l = parse_loadavg(*t))
          run_queue_max_ = std::max(run_queue_max_.value_or(0), l->running);
  }
}

std::optional<SchedulingReport> SchedulingProbe::stop() {
  if (!thread_.joinable()) return std::nullopt;
  const SchedulingSnapshot after = read_scheduling_snapshot();
  stopping_ = true;
  thread_.join();
  return scheduling_report(before_, after, wakes_, run_queue_max_);
}

}  // namespace rocehil
