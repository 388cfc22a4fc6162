// CaptureRun with several workers, on sources standing in for a fanout group's sockets. The
// fault under test cannot be caused for real here: a worker's analysis running out of memory
// (std::bad_alloc from a growing flow table). It must not end the process: the other workers
// stop, every file is closed whole, and the exception reaches the caller.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <new>
#include <thread>

#include <unistd.h>

#include "rocehil/capture/capture_run.hpp"
#include "rocehil/capture/file_source.hpp"
#include "rocehil/capture/frame_builder.hpp"
#include "rocehil/common/roce_wire.hpp"

namespace rocehil::capture {
namespace {

namespace fs = std::filesystem;

// Delivers `frames` copies of one RoCE frame in one batch, then either fails (as an analyzer
// out of memory would, inside the worker) or waits until stopped, as a live socket does.
class ScriptedSource final : public LiveSource {
 public:
  ScriptedSource(std::size_t frames, bool fails, bool ends = false, std::uint64_t speed_bps = 0)
      : count_(frames), fails_(fails), ends_(ends) {
    info_.speed_bps = speed_bps;
    RoceFrame f;
    f.bth.opcode = wire::opcode::rc_write_only;
    bytes_ = build(f);
  }

  std::size_t next_batch(std::span<Frame> out) override {
    if (delivered_ < count_) {
      const std::size_t n = std::min(out.size(), count_ - delivered_);
      for (std::size_t i = 0; i < n; ++i) {
        out[i].ts_ns = 1'700'000'000'000'000'000ull + delivered_ + i;
        out[i].caplen = out[i].wire_len = static_cast<std::uint32_t>(bytes_.size());
        out[i].link_type = link_type::ethernet;
        out[i].data = bytes_.data();
      }
      delivered_ += n;
      return n;
    }
    if (fails_) throw std::bad_alloc();
    if (ends_) return 0;
    std::unique_lock lock(mutex_);
    stopped_cv_.wait(lock, [this] { return stopped_; });
    return 0;
  }
  void stop() noexcept override {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    stopped_cv_.notify_all();
  }
  CaptureCounters counters() override { return {.captured = delivered_}; }
  const InterfaceInfo& interface_info() const noexcept override { return info_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::size_t count_;
  bool fails_;
  bool ends_;
  std::size_t delivered_ = 0;
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  InterfaceInfo info_{.name = "scripted", .description = "test", .bpf_filter = "", .speed_bps = 0};
};

std::size_t frames_in(const std::string& path) {
  auto file = FileSource::open(path);
  std::vector<Frame> batch(64);
  std::size_t total = 0;
  while (const std::size_t n = file->next_batch(batch)) total += n;
  EXPECT_TRUE(file->problems().empty()) << path;
  return total;
}

TEST(CaptureRunWorkers, AFailingWorkerStopsTheOthersClosesTheFilesAndThrows) {
  const fs::path dir =
      fs::temp_directory_path() / ("rocehil-capture-run-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ScriptedSource healthy(10, false);
  ScriptedSource failing(5, true);
  CaptureRunOptions options;
  options.write_path = (dir / "fail.pcapng").string();
  CaptureRun run({&healthy, &failing}, options);

  // Without the failure stopping it, the healthy worker would wait for ever: a watchdog ends
  // the run instead, and says so.
  std::mutex m;
  std::condition_variable cv;
  bool done = false, fired = false;
  std::thread watchdog([&] {
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; })) {
      fired = true;
      run.stop();
    }
  });
  EXPECT_THROW(run.run(), std::bad_alloc);
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_all();
  watchdog.join();
  EXPECT_FALSE(fired) << "the failing worker did not stop the others";
  EXPECT_EQ(frames_in((dir / "fail-w1.pcapng").string()), 10u);
  EXPECT_EQ(frames_in((dir / "fail-w2.pcapng").string()), 5u);
  fs::remove_all(dir);
}

// A run that timed pauses at its capture point's 0.4 Gb/s keeps a file saying so, not the 10 Gb/s
// its veth reports: `rocehil analyze` on the kept file then agrees with the run.
TEST(CaptureRunFiles, AKeptFileCarriesTheSpeedTheAnalysisUsed) {
  const fs::path dir =
      fs::temp_directory_path() / ("rocehil-capture-speed-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::uint64_t given : {std::uint64_t{0}, std::uint64_t{400'000'000}}) {
    ScriptedSource veth(4, false, /*ends=*/true, /*speed_bps=*/10'000'000'000);
    CaptureRunOptions options;
    options.write_path = (dir / "kept.pcapng").string();
    options.analyzer.link_gbps = given != 0 ? 0.4 : 10;
    options.file_speed_bps = given;
    CaptureRun run({&veth}, options);
    const CaptureSummary summary = run.run();
    EXPECT_EQ(summary.iface.speed_bps, 10'000'000'000u);  // the interface's own, as reported
    auto file = FileSource::open(options.write_path);
    std::vector<Frame> batch(8);
    while (file->next_batch(batch) != 0) {
    }
    ASSERT_EQ(file->interfaces().size(), 1u);
    EXPECT_EQ(file->interfaces()[0].speed_bps, given != 0 ? given : 10'000'000'000u);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rocehil::capture
