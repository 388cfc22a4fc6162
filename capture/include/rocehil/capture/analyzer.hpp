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

  void add(const Frame& frame);
  void add(std::span<const Frame> frames) {
    for (const Frame& f : frames) add(f);
  }

  // The result so far; flows sorted by bytes. Cheap enough to call once at the end.
  Analysis result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rocehil::capture
