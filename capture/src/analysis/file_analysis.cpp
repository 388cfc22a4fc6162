#include "rocehil/capture/file_analysis.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <system_error>

#include "files/file_parts.hpp"
#include "rocehil/capture/analyzer.hpp"

namespace rocehil::capture {

namespace {

constexpr std::uint64_t no_end = UINT64_MAX;

// Reads a source to its end or limit into an analyzer.
void read_into(FileSource& source, Analyzer& analyzer, const std::function<void()>& after_batch) {
  std::array<Frame, 256> batch;
  while (const std::size_t n = source.next_batch(batch)) {
    analyzer.add(std::span<const Frame>(batch.data(), n));
    if (after_batch) after_batch();
  }
}

struct Part {
  std::uint64_t begin = 0;
  std::uint64_t end = no_end;  // the next part's guessed start
  std::unique_ptr<FileSource> source;
  std::unique_ptr<Analyzer> analyzer;
  std::atomic<std::uint64_t> consumed{0};
  std::exception_ptr error;
};

FileAnalysis one_thread(const std::string& path, const AnalyzerOptions& options,
                        const FileProgress& progress) {
  auto source = FileSource::open(path);
  Analyzer analyzer(options);
  read_into(*source, analyzer, [&] {
    if (progress) progress(source->bytes_consumed(), source->size_hint());
  });
  FileAnalysis out;
  out.analysis = analyzer.result();
  out.name = source->name();
  out.format = source->format();
  out.problems = source->problems();
  out.records = source->records();
  return out;
}

// Where the parts start: the file's start, then a record boundary found near each even share
// of the file. Fewer parts where the file is small or no boundary is found.
std::vector<std::uint64_t> part_starts(const std::string& path, const FileSource& probe,
                                       std::uint64_t first_ts_ns, std::uint64_t size,
                                       const FileAnalysisOptions& how) {
  std::vector<std::uint64_t> starts{0};
  const std::uint64_t parts = std::clamp<std::uint64_t>(
      size / std::max<std::uint64_t>(how.min_part_bytes, 1), 1, how.workers);
  // No part starts before the first record's end: the headers before it belong to part 0.
  const std::uint64_t lower = FileParts::position(probe);
  for (std::uint64_t w = 1; w < parts; ++w) {
    const std::uint64_t nominal = std::max(size / parts * w, lower);
    const std::optional<std::uint64_t> at =
        FileParts::find_boundary(path, probe, nominal, first_ts_ns);
    if (at && *at > starts.back() && *at < size) starts.push_back(*at);
  }
  return starts;
}

}  // namespace

FileAnalysis analyze_file(const std::string& path, const AnalyzerOptions& options,
                          const FileAnalysisOptions& how, const FileProgress& progress) {
  if (how.workers <= 1 || path == "-") return one_thread(path, options, progress);
  // The probe reads the headers and the first record: the format state every later part starts
  // from, and the timestamp the timeline counts from.
  auto probe = FileSource::open(path);
  const std::uint64_t size = probe->size_hint();
  Frame first;
  if (size == 0 || probe->next_batch(std::span<Frame>(&first, 1)) != 1)
    return one_thread(path, options, progress);
  const std::vector<std::uint64_t> starts = part_starts(path, *probe, first.ts_ns, size, how);
  if (starts.size() == 1) return one_thread(path, options, progress);

  std::vector<std::unique_ptr<Part>> parts;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    auto p = std::make_unique<Part>();
    p->begin = starts[k];
    p->end = k + 1 < starts.size() ? starts[k + 1] : no_end;
    parts.push_back(std::move(p));
  }
  const auto open_part = [&](std::uint64_t begin, std::uint64_t end, std::uint64_t records) {
    auto source = FileParts::open_at(path, *probe, begin, records);
    if (end != no_end) FileParts::stop_before(*source, end);
    return source;
  };
  std::vector<std::future<void>> running;
  const auto read_part = [&](std::size_t k) {
    Part& p = *parts[k];
    try {
      if (k == 0) {
        p.source = FileSource::open(path);
        FileParts::stop_before(*p.source, p.end);
        p.analyzer = std::make_unique<Analyzer>(options);
      } else {
        p.source = open_part(p.begin, p.end, 0);
        p.analyzer = std::make_unique<Analyzer>(options, Analyzer::LaterPart{first.ts_ns});
      }
      read_into(*p.source, *p.analyzer, [&] {
        p.consumed.store(FileParts::position(*p.source) - p.begin, std::memory_order_relaxed);
      });
    } catch (...) {
      p.error = std::current_exception();
    }
  };
  try {
    for (std::size_t k = 0; k < parts.size(); ++k)
      running.push_back(std::async(std::launch::async, read_part, k));
  } catch (const std::system_error&) {
    // No thread to be had (a process limit): the parts begun are let finish, unused.
    for (auto& r : running) r.wait();
    return one_thread(path, options, progress);
  }
  const auto report = [&] {
    if (!progress) return;
    std::uint64_t consumed = 0;
    for (const auto& p : parts) consumed += p->consumed.load(std::memory_order_relaxed);
    progress(consumed, size);
  };
  for (auto& r : running) {
    while (r.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) report();
  }
  for (const auto& p : parts)
    if (p->error) std::rethrow_exception(p->error);

  // Fold the parts in order. A part is taken only if the one before it stopped exactly where
  // it starts, which proves its start a real boundary, and read no pcapng section or interface
  // that the later part did not know of; otherwise the one before reads on to the end.
  FileAnalysis out;
  out.name = probe->name();
  out.format = probe->format();
  Analyzer& whole = *parts[0]->analyzer;
  // The parts taken after the first, and how each is read again for its flows that resent
  // across its start.
  std::vector<Analyzer*> later;
  std::vector<Analyzer::Replay> replays;
  std::uint64_t records_before = 0;
  for (std::size_t k = 0;; ++k) {
    Part& p = *parts[k];
    const bool last = k + 1 == parts.size();
    const std::uint64_t known_header_blocks = k == 0 ? FileParts::header_blocks(*probe) : 0;
    const bool stopped_at_next = FileParts::stopped_at_limit(*p.source);
    const bool next_follows = !last && stopped_at_next &&
                              FileParts::position(*p.source) == parts[k + 1]->begin &&
                              FileParts::header_blocks(*p.source) == known_header_blocks;
    if (!last && stopped_at_next && !next_follows) {
      FileParts::read_on(*p.source);
      read_into(*p.source, *p.analyzer, [&] {
        p.consumed.store(FileParts::position(*p.source) - p.begin, std::memory_order_relaxed);
        report();
      });
      p.end = no_end;
      out.read_on = true;
    }
    if (k > 0) {
      later.push_back(p.analyzer.get());
      replays.push_back([&open_part, begin = p.begin, end = p.end](const auto& sink) {
        auto again = open_part(begin, end, 0);
        std::array<Frame, 256> batch;
        while (const std::size_t n = again->next_batch(batch))
          if (!sink(std::span<const Frame>(batch.data(), n))) break;
      });
    }
    if (!p.source->problems().empty()) {
      // A later part numbered its records from 1: read it again numbered from the file's start,
      // so the problem reads exactly as one thread would have reported it.
      if (k == 0) {
        out.problems = p.source->problems();
      } else {
        auto numbered = open_part(p.begin, p.end, records_before);
        std::array<Frame, 256> batch;
        while (numbered->next_batch(batch) > 0) {
        }
        out.problems = numbered->problems();
      }
    }
    records_before += p.source->records();
    if (!next_follows) {
      out.parts = static_cast<unsigned>(k + 1);
      break;
    }
  }
  // A flow whose PSNs spread over half the PSN space across a boundary: the parts after it
  // were joined to a state the replay did not confirm, so one pass decides.
  if (!later.empty() && !whole.fold(later, replays, how.workers))
    return one_thread(path, options, progress);
  out.records = records_before;
  out.analysis = whole.result();
  return out;
}

}  // namespace rocehil::capture
