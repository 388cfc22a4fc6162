#include "rocehil/capture/capture_run.hpp"

#include <array>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "rocehil/capture/analyzer.hpp"
#include "rocehil/common/clock.hpp"
#include "rocehil/common/error.hpp"
#include "writers/rotating_writer.hpp"

namespace rocehil::capture {

namespace {

// Ends the capture when the duration is over or a stop is asked for, and reports progress: the
// capture thread itself sits in next_batch and cannot watch the clock.
class Watcher {
 public:
  Watcher(const std::function<void()>& stop_sources, const std::atomic<bool>& stop_requested,
          double duration_s, const std::atomic<std::uint64_t>& frames,
          const std::atomic<std::uint64_t>& bytes,
          const std::function<void(const CaptureProgress&)>& progress)
      : thread_([&, duration_s, stop_sources] {
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
              stop_sources();
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

// A worker's file when several write: "mirror.pcapng" becomes "mirror-w1.pcapng".
std::string worker_path(const std::string& path, std::size_t worker, std::size_t workers) {
  if (workers == 1) return path;
  const std::string tag = "-w" + std::to_string(worker + 1);
  const std::size_t slash = path.rfind('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = path.rfind('.');
  // No extension (a dot only in a directory, or a name that starts with its only dot): append.
  if (dot == std::string::npos || dot <= name) return path + tag;
  return path.substr(0, dot) + tag + path.substr(dot);
}

// What one worker thread does with its source: every batch to its file first, then to its
// analyzer, until the source ends.
struct Worker {
  LiveSource* source = nullptr;
  std::unique_ptr<RotatingWriter> writer;
  std::unique_ptr<Analyzer> analyzer;
  std::string write_error;
  std::vector<std::string> files;  // once the writer is gone
  std::uint64_t files_deleted = 0;
  std::exception_ptr failure;  // what ended this worker early (the analyzer out of memory)

  // drain(), with what it throws kept for the caller's thread instead of ending the process:
  // the other workers are stopped, and the files are still closed before it is thrown.
  void run(std::atomic<std::uint64_t>& frames, std::atomic<std::uint64_t>& bytes,
           const std::function<void()>& stop_all) noexcept {
    try {
      drain(frames, bytes);
    } catch (...) {
      failure = std::current_exception();
      stop_all();
    }
  }

  void end_file(const std::string& error) {
    write_error = error;
    files = writer->files();
    files_deleted = writer->files_deleted();
    writer.reset();
  }

  void drain(std::atomic<std::uint64_t>& frames, std::atomic<std::uint64_t>& bytes) {
    std::array<Frame, 256> batch;
    for (;;) {
      const std::size_t n = source->next_batch(batch);
      if (n == 0) break;
      // Results reach the disk before anything else looks at them.
      if (writer) {
        try {
          for (std::size_t i = 0; i < n; ++i)
            writer->write(batch[i].ts_ns, {batch[i].data, batch[i].caplen}, batch[i].wire_len);
        } catch (const Error& e) {
          end_file(e.what());
        }
      }
      analyzer->add(std::span<const Frame>(batch.data(), n));
      std::uint64_t batch_bytes = 0;
      for (std::size_t i = 0; i < n; ++i) batch_bytes += batch[i].wire_len;
      frames.fetch_add(n, std::memory_order_relaxed);
      bytes.fetch_add(batch_bytes, std::memory_order_relaxed);
    }
  }

  void close(const CaptureCounters& counters, std::uint64_t start_ns, std::uint64_t end_ns) {
    if (!writer) return;
    try {
      writer->close(counters, start_ns, end_ns);
    } catch (const Error& e) {
      write_error = e.what();
    }
    files = writer->files();
    files_deleted = writer->files_deleted();
  }
};

}  // namespace

CaptureRun::CaptureRun(LiveSource& source, const CaptureRunOptions& options)
    : CaptureRun(std::vector<LiveSource*>{&source}, options) {}

CaptureRun::CaptureRun(std::vector<LiveSource*> sources, const CaptureRunOptions& options)
    : sources_(std::move(sources)), options_(options) {}

CaptureRun::~CaptureRun() = default;

void CaptureRun::stop() noexcept {
  stop_requested_ = true;
  for (LiveSource* s : sources_) s->stop();
}

CaptureSummary CaptureRun::run(const std::function<void(const CaptureProgress&)>& progress) {
  CaptureSummary summary;
  summary.iface = sources_.front()->interface_info();
  const std::size_t n = sources_.size();

  InterfaceInfo written = summary.iface;
  if (options_.file_speed_bps != 0) written.speed_bps = options_.file_speed_bps;
  std::vector<Worker> workers(n);
  for (std::size_t w = 0; w < n; ++w) {
    workers[w].source = sources_[w];
    if (options_.write_path.empty()) continue;
    workers[w].writer = std::make_unique<RotatingWriter>(
        RotationOptions{.path = worker_path(options_.write_path, w, n),
                        .ring_files = options_.ring_files,
                        .file_bytes = options_.ring_bytes,
                        .snaplen = options_.snaplen,
                        .iface = written});
  }

  AnalyzerOptions analyzer_options = options_.analyzer;
  summary.start_ns = static_cast<std::uint64_t>(wall_clock_ns());
  // A live capture observed the link from its start to its stop, frames or not; a replayed
  // file's window is its frames'.
  const bool live = !sources_.front()->replays_a_file();
  if (live) analyzer_options.window_start_ns = summary.start_ns;
  for (const LiveSource* s : sources_)
    if (s->thins_mirror_sessions()) analyzer_options.mirror_sequences = false;
  for (Worker& w : workers) {
    w.analyzer =
        n == 1 ? std::make_unique<Analyzer>(analyzer_options)
               : std::make_unique<Analyzer>(
                     analyzer_options, Analyzer::LaterPart{.timeline_start_ns = summary.start_ns,
                                                           .live_worker = true});
  }

  std::atomic<std::uint64_t> frames{0};
  std::atomic<std::uint64_t> bytes{0};
  {
    Watcher watcher(
        [this] {
          for (LiveSource* s : sources_) s->stop();
        },
        stop_requested_, options_.duration_s, frames, bytes, progress);
    const std::function<void()> stop_all = [this] {
      for (LiveSource* s : sources_) s->stop();
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < n; ++w)
      threads.emplace_back([&, w] { workers[w].run(frames, bytes, stop_all); });
    workers[0].run(frames, bytes, stop_all);
    for (std::thread& t : threads) t.join();
  }
  summary.end_ns = static_cast<std::uint64_t>(wall_clock_ns());
  for (Worker& w : workers) {
    const CaptureCounters c = w.source->counters();
    summary.workers.push_back(c);
    summary.counters.captured += c.captured;
    summary.counters.dropped_buffer += c.dropped_buffer;
    summary.counters.dropped_interface += c.dropped_interface;
    summary.counters.moved += c.moved;
    summary.counters.lost_upstream += c.lost_upstream;
    summary.counters.upstream_counted = summary.counters.upstream_counted || c.upstream_counted;
    w.close(c, summary.start_ns, summary.end_ns);
    summary.files.insert(summary.files.end(), w.files.begin(), w.files.end());
    summary.files_deleted += w.files_deleted;
    if (summary.write_error.empty()) summary.write_error = w.write_error;
  }
  // The files are complete on disk; the analysis is not.
  for (const Worker& w : workers)
    if (w.failure) std::rethrow_exception(w.failure);
  std::unique_ptr<Analyzer> joined;
  Analyzer* analyzer = workers[0].analyzer.get();
  if (n > 1) {
    std::vector<std::unique_ptr<Analyzer>> shares;
    for (Worker& w : workers) shares.push_back(std::move(w.analyzer));
    joined = Analyzer::combine(analyzer_options, shares);
    analyzer = joined.get();
  }
  if (live) analyzer->set_window_end(summary.end_ns);
  summary.analysis = analyzer->result();
  // A remote mirror session's losses before the collector are capture loss too: as its source
  // counted them over the whole session, else as the analysis found them.
  if (!summary.counters.upstream_counted)
    summary.counters.lost_upstream = summary.analysis.mirror.lost();
  return summary;
}

}  // namespace rocehil::capture
