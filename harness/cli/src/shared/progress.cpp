#include "shared/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "rocehil/common/units.hpp"

namespace rocehil::cli {

Progress::Progress(std::string label, std::string unit, std::uint64_t total, std::FILE* out,
                   std::chrono::milliseconds quiet_for)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      out_(out),
      tty_(isatty(fileno(out)) != 0),
      start_(clock::now()),
      last_draw_(start_),
      quiet_for_(quiet_for) {}

Progress::~Progress() {
  finish();
}

std::string Progress::line(std::uint64_t done, double elapsed_s, int bar_width) const {
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0;
  std::string s = label_;
  if (total_ > 0) {
    const double frac = std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
    if (bar_width > 0) {
      const int filled = static_cast<int>(frac * bar_width);
      s += " [" + std::string(static_cast<std::size_t>(filled), '#') +
           std::string(static_cast<std::size_t>(bar_width - filled), '.') + "]";
    }
    s += fmt::format(" {:3.0f}%  {} of {}", frac * 100,
                     format_si(static_cast<double>(done), unit_.c_str()),
                     format_si(static_cast<double>(total_), unit_.c_str()));
    if (rate > 0 && done < total_)
      s += "  ETA " + format_duration_ns(static_cast<double>(total_ - done) / rate * 1e9);
  } else {
    s += "  " + format_si(static_cast<double>(done), unit_.c_str());
  }
  s += "  " + format_si(rate, (unit_ + "/s").c_str());
  return s;
}

void Progress::update(std::uint64_t done) {
  if (!enabled_ || !tty_) return;
  const auto now = clock::now();
  if (now - start_ < quiet_for_) return;
  if (now - last_draw_ < redraw_every_ && drawn_) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  fmt::print(out_, "\r\033[K{}", line(done, elapsed, 30));
  std::fflush(out_);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_ && tty_) {
    fmt::print(out_, "\r\033[K");
    std::fflush(out_);
  }
  drawn_ = false;
}

}  // namespace rocehil::cli
