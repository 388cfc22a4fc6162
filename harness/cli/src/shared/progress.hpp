#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rocehil::cli {

// Progress of long work on stderr: on a terminal, a bar redrawn in place with rate and ETA. To a
// file or pipe, nothing: a log holds the lines a command prints of its own accord (a run's line
// per case), never progress frames. Nothing is drawn for work that ends within `quiet_for`:
// short runs stay clean.
class Progress {
 public:
  using clock = std::chrono::steady_clock;

  Progress(std::string label, std::string unit, std::uint64_t total, std::FILE* out = stderr,
           std::chrono::milliseconds quiet_for = std::chrono::milliseconds(1000));
  ~Progress();  // clears a bar left on the terminal

  // Cheap to call often: it only looks at the clock every few thousand calls' worth of time.
  void update(std::uint64_t done);
  void finish();
  void set_enabled(bool enabled) { enabled_ = enabled; }

  // The line as drawn, for tests: "analyze [#####.....]  50%  1.2 GB of 2.4 GB  1.1 GB/s  ETA 1 s".
  std::string line(std::uint64_t done, double elapsed_s, int bar_width) const;

 private:
  std::string label_;
  std::string unit_;
  std::uint64_t total_;
  std::FILE* out_;
  bool tty_;
  bool enabled_ = true;
  bool drawn_ = false;
  clock::time_point start_;
  clock::time_point last_draw_;
  std::chrono::milliseconds quiet_for_;
  std::chrono::milliseconds redraw_every_{200};
};

}  // namespace rocehil::cli
