#include "rocehil/capture/capture_run.hpp"

#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "rocehil/capture/analyzer.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "rotating_writer.hpp"

namespace rocehil::capture {

namespace {

// Ends the capture when the duration is over or a stop is asked for, and reports progress: the
// capture thread itself sits in next_batch and cannot watch the clock.
class Watcher {
 public:
  Watcher(LiveSource& source, const std::atomic<bool>& stop_requested, double duration_s,
          const std::atomic<std::uint64_t>& frames, const std::atomic<std::uint64_t>& bytes,
          const std::function<void(const CaptureProgress&)>& progress)
      : thread_([&, duration_s] {
          const auto begin = std::chrono::steady_clock::now();
          const auto deadline = begin + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::duration<double>(duration_s));
          std::unique_lock lock(mutex_);
          while (!done_) {
            cv_.wait_for(lock, std::chrono::milliseconds(200));
            const auto now = std::chrono::steady_clock::now();
            if (progress && !done_)
              progress({frames.load(std::memory_order_relaxed),
                        bytes.load(std::memory_order_relaxed),
                        std::chrono::duration<double>(now - begin).count()});
            if (stop_requested.load() || (duration_s > 0 && now >= deadline)) {
              source.stop();
              return;
            }
          }
        }) {}

  ~Watcher() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

}  // namespace

CaptureRun::CaptureRun(LiveSource& source, const CaptureRunOptions& options)
    : source_(source), options_(options) {}

CaptureRun::~CaptureRun() = default;

void CaptureRun::stop() noexcept {
  stop_requested_ = true;
  source_.stop();
}

CaptureSummary CaptureRun::run(const std::function<void(const CaptureProgress&)>& progress) {
  CaptureSummary summary;
  summary.iface = source_.interface_info();

  std::unique_ptr<RotatingWriter> writer;
  if (!options_.write_path.empty()) {
    writer = std::make_unique<RotatingWriter>(RotationOptions{.path = options_.write_path,
                                                              .ring_files = options_.ring_files,
                                                              .file_bytes = options_.ring_bytes,
                                                              .snaplen = options_.snaplen,
                                                              .iface = summary.iface});
  }

  AnalyzerOptions analyzer_options = options_.analyzer;
  summary.start_ns = static_cast<std::uint64_t>(wall_clock_ns());
  // A live capture observed the link from its start to its stop, frames or not; a replayed
  // file's window is its frames'.
  const bool live = !source_.replays_a_file();
  if (live) analyzer_options.window_start_ns = summary.start_ns;
  Analyzer analyzer(analyzer_options);

  std::atomic<std::uint64_t> frames{0};
  std::atomic<std::uint64_t> bytes{0};
  {
    Watcher watcher(source_, stop_requested_, options_.duration_s, frames, bytes, progress);
    std::array<Frame, 256> batch;
    for (;;) {
      const std::size_t n = source_.next_batch(batch);
      if (n == 0) break;
      // Results reach the disk before anything else looks at them.
      if (writer) {
        try {
          for (std::size_t i = 0; i < n; ++i)
            writer->write(batch[i].ts_ns, {batch[i].data, batch[i].caplen}, batch[i].wire_len);
        } catch (const Error& e) {
          summary.write_error = e.what();
          summary.files = writer->files();
          summary.files_deleted = writer->files_deleted();
          writer.reset();
        }
      }
      analyzer.add(std::span<const Frame>(batch.data(), n));
      std::uint64_t batch_bytes = 0;
      for (std::size_t i = 0; i < n; ++i) batch_bytes += batch[i].wire_len;
      frames.fetch_add(n, std::memory_order_relaxed);
      bytes.fetch_add(batch_bytes, std::memory_order_relaxed);
    }
  }
  summary.end_ns = static_cast<std::uint64_t>(wall_clock_ns());
  summary.counters = source_.counters();
  if (writer) {
    try {
      writer->close(summary.counters, summary.start_ns, summary.end_ns);
    } catch (const Error& e) {
      summary.write_error = e.what();
    }
    summary.files = writer->files();
    summary.files_deleted = writer->files_deleted();
  }
  if (live) analyzer.set_window_end(summary.end_ns);
  summary.analysis = analyzer.result();
  return summary;
}

}  // namespace rocehil::capture
