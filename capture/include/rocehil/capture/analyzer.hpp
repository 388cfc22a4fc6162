#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "rocehil/capture/analysis.hpp"
#include "rocehil/capture/frame.hpp"

namespace rocehil::capture {

// Folds frames into an Analysis. add() is the per-frame hot path: it decodes in place and updates
// flat counters and tables; it allocates only when a new flow or QP grows a table or the timeline
// grows, so memory follows flows and capture duration, never the number of frames.
class Analyzer {
 public:
  explicit Analyzer(const AnalyzerOptions& options = {});

  // An analyzer for a share of a capture analysed beside the others: a later part of a capture
  // file read in chunks by several threads, folded into the parts before it with append(), or
  // one worker's share of a live capture, joined with the other workers' by combine(). Timeline
  // bins count from `timeline_start_ns`: for a file, its first record's timestamp (which the
  // first part's analyzer takes from its own first frame); live, when the capture started.
  struct LaterPart {
    std::uint64_t timeline_start_ns = 0;
    // One worker of a live capture, for combine() only: it accounts the PFC and PAUSE frames it
    // sees itself instead of keeping each one for a replay, so its memory stays bounded however
    // long the capture and its pause storms last. A file part (append()) keeps them.
    bool live_worker = false;
  };
  Analyzer(const AnalyzerOptions& options, LaterPart part);
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

  // Feeds the frames of one part again, in order, to `sink` (see append), until the sink returns
  // false: it needs no more.
  using Replay = std::function<void(const std::function<bool(std::span<const Frame>)>& sink)>;

  // Folds in `next`, a LaterPart analyzer fed the frames that follow this one's in the capture;
  // afterwards this analyzer is exactly as if it had been fed those frames itself, and the
  // result is the same. Counts add; PFC frames are replayed through this analyzer's pause
  // accounting in order; a flow's PSN checks join at the boundary from the two states. Only a
  // flow whose first request after the boundary is behind the PSN reached before it (a
  // retransmission across the boundary) needs `next`'s frames again: then `replay` is called
  // once and only those flows are followed through it, up to where they rejoin the part's own
  // judgements (usually a go-back-N window: a few frames) or their last packet in `next`; the
  // sink returns false when no flow is left to follow.
  void append(Analyzer&& next, const Replay& replay);

  // append() in two steps, so that the replays of many parts run beside each other and beside
  // the folding of the parts after them. append_later folds `next` in at once and gives each
  // flow that needs a replay the state the replay will leave it in: the part's last, if any of
  // its requests passes the PSN reached before the boundary, that PSN otherwise. The replay
  // runs on a thread of its own, started before the flows are folded; finish_replay waits for
  // it and adds its judgements (call it on this analyzer's thread, in any order, before
  // result()). finish_replay returns false when a flow's state came out otherwise, which takes
  // PSNs spread over half the PSN space: the parts appended after it were then joined to a
  // wrong state, and the fold must be done again.
  class PendingReplay;
  PendingReplay append_later(Analyzer&& next, Replay replay);
  bool finish_replay(PendingReplay&& pending);

  // Joins the analyzers of the workers of one live capture, each fed its share of the frames at
  // the same time (LaterPart analyzers with the same timeline start). A flow is expected on one
  // worker (the kernel or the NIC spreads frames by flow hash); one seen by several adds its
  // counts, and its PSN judgements are each worker's own. Pauses: workers that kept their PFC
  // and PAUSE frames have them replayed through one pause accounting in timestamp order; live
  // workers (LaterPart::live_worker) accounted them themselves. The frames of one sender carry
  // the same headers, so any hash gives them all to one worker, and its state machines saw
  // exactly what one worker's would; PFC and PAUSE frames have no IP header, so the kernel's
  // fanout and RSS give every one of them to a single worker, whose accounting is taken whole
  // (exactly one worker's). Should several live workers have seen pauses, their totals are added
  // (times summed in another order: equal to the last bits of a double).
  static std::unique_ptr<Analyzer> combine(const AnalyzerOptions& options,
                                           std::vector<std::unique_ptr<Analyzer>>& workers);

  // The result so far; flows sorted by bytes. Cheap enough to call once at the end.
  Analysis result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The flows of one later part that append_later is following through its frames again, with
// that part's tables, until finish_replay.
class Analyzer::PendingReplay {
 public:
  PendingReplay();
  PendingReplay(PendingReplay&&) noexcept;
  PendingReplay& operator=(PendingReplay&&) noexcept;
  ~PendingReplay();

  bool empty() const noexcept { return !flows_; }  // no flow needed the part's frames again

 private:
  friend class Analyzer;
  struct Flows;
  std::unique_ptr<Flows> flows_;
};

}  // namespace rocehil::capture
