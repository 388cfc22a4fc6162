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
  // file read in chunks by several threads, folded into the first part with fold() or append(), or
  // one worker's share of a live capture, joined with the other workers' by combine(). Timeline
  // bins count from `timeline_start_ns`: for a file, its first record's timestamp (which the
  // first part's analyzer takes from its own first frame); live, when the capture started.
  struct LaterPart {
    std::uint64_t timeline_start_ns = 0;
    // One worker of a live capture, for combine() only: it accounts the PFC and PAUSE frames it
    // sees itself instead of keeping each one for a replay, so its memory stays bounded however
    // long the capture and its pause storms last. A file part (fold(), append()) keeps them.
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
  // sink returns false when no flow is left to follow. Like fold(), it ends add()'s part.
  void append(Analyzer&& next, const Replay& replay);

  // append() for many parts at once, on up to `threads` threads: `later` are the parts after
  // this one, in capture order, and replays[i] feeds later[i]'s frames again. The flows are
  // merged in shards by hash, each shard by one thread through every part in order; a part's
  // flows that resent across its start are followed again on a thread of their own, beside the
  // merging. Merging gives each such flow the state following it will leave: the part's last,
  // if any of its requests passes the PSN reached before the cut, that PSN otherwise. Returns
  // false when a flow came out otherwise (its PSNs spread over half the PSN space across a
  // cut): the parts after that cut were then joined to a wrong state, and the result is not
  // exact (with one part it is: that state is set right). After a fold, add() takes no frames.
  // `shards` (a power of two up to 16) overrides the number of shards chosen for `threads` and
  // the CPUs this process may use (one below 4): tests ask for shards on any machine.
  bool fold(std::span<Analyzer* const> later, std::span<const Replay> replays, unsigned threads,
            unsigned shards = 0);

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

}  // namespace rocehil::capture
