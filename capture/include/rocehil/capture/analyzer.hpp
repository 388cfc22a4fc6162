#pragma once

#include <memory>
#include <span>

#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/frame.hpp"

namespace rocehil::capture {

// Folds frames into an Analysis. add() is the per-frame hot path: it decodes in place and updates
// flat counters and tables; it allocates only when a new flow or QP grows a table or the timeline
// grows, so memory follows flows and capture duration, never the number of frames.
class Analyzer {
 public:
  explicit Analyzer(const AnalyzerOptions& options = {});
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Frames in capture order. Batches are faster: the analyzer locates the layers of a few
  // frames ahead and prefetches their flows' table slots, so the memory latency of a large flow
  // table overlaps the work on the frames before them.
  void add(std::span<const Frame> frames);
  void add(const Frame& frame) { add(std::span<const Frame>(&frame, 1)); }

  // A live capture's stop time: pauses still in force are counted up to it (AnalyzerOptions::
  // window_end_ns, known only once the capture has ended).
  void set_window_end(std::uint64_t ns) noexcept;

  // The result so far; flows sorted by bytes. Cheap enough to call once at the end.
  Analysis result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rocehil::capture
