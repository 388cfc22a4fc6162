#include "rocehil/reports/repeats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rocehil/common/units.hpp"
#include "rocehil/reports/comparison.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::reports {

namespace {

std::string_view verdict_words(suites::Verdict v) {
  switch (v) {
    case suites::Verdict::pass: return "passed";
    case suites::Verdict::warn: return "warned";
    case suites::Verdict::fail: return "failed";
    case suites::Verdict::error: return "could not be graded";
  }
  return "?";
}

// A case with parts has no busbw of its own: its headline is a part's, the first (by name) that
// measured one, named by it ("roce busbw").
std::optional<std::string> part_with(const std::vector<const Attempt*>& finals,
                                     std::string_view metric) {
  for (const Attempt* a : finals)
    for (const auto& [key, value] : a->metrics)
      if (const auto dot = key.find('.');
          dot != std::string::npos && std::string_view(key).substr(dot + 1) == metric)
        return key.substr(0, dot);
  return std::nullopt;
}

std::optional<Headline> headline_of(const CaseRecord& c,
                                    const std::vector<const Attempt*>& finals) {
  const bool point_to_point = c.workload == "bw" || c.workload == "calibrate_bw";
  struct Choice {
    std::string metric;
    std::string label;
    const char* unit;
  };
  std::vector<Choice> choices = {{"busbw_gbps", point_to_point ? "bw" : "busbw", "Gbit/s"},
                                 {"lat_p99_us", "lat p99", "us"},
                                 {"iperf_gbps", "iperf3", "Gbit/s"}};
  if (c.workload == suites::parts_workload)
    for (Choice& choice : choices)
      if (const auto part = part_with(finals, choice.metric)) {
        choice.metric = fmt::format("{}.{}", *part, choice.metric);
        choice.label = fmt::format("{} {}", *part, choice.label);
      }
  for (const auto& choice : choices) {
    std::vector<double> values;
    for (const Attempt* a : finals) {
      if (a->error) continue;
      if (const auto it = a->metrics.find(choice.metric); it != a->metrics.end())
        values.push_back(it->second);
    }
    if (const auto s = spread_of(values))
      return Headline{choice.metric, choice.label, choice.unit, *s};
  }
  return std::nullopt;
}

}  // namespace

std::vector<const Attempt*> final_attempts(const CaseRecord& c) {
  std::vector<const Attempt*> out;
  for (std::size_t i = 0; i < c.attempts.size(); ++i)
    if (i + 1 == c.attempts.size() || c.attempts[i + 1].repeat != c.attempts[i].repeat)
      out.push_back(&c.attempts[i]);
  return out;
}

std::optional<Spread> spread_of(const std::vector<double>& values) {
  std::vector<double> finite;
  for (const double v : values)
    if (std::isfinite(v)) finite.push_back(v);
  if (finite.empty()) return std::nullopt;
  const auto [low, high] = std::minmax_element(finite.begin(), finite.end());
  return Spread{.median = median(finite), .low = *low, .high = *high, .samples = finite.size()};
}

RepeatsSummary summarize_repeats(const CaseRecord& c) {
  RepeatsSummary s;
  const std::vector<const Attempt*> finals = final_attempts(c);
  s.repeats = static_cast<int>(finals.size());
  s.retries = static_cast<int>(c.attempts.size() - finals.size());
  s.headline = headline_of(c, finals);
  for (const Attempt* a : finals) {
    if (a->error) {
      // The first fabric fault, else the first error: a fabric fault decides the outcome (fail
      // beats error), so it is the one to name.
      const bool fabric = a->error->fault == Fault::fabric;
      if (!s.error || (fabric && s.error->fault != Fault::fabric)) {
        s.error = a->error;
        s.error_repeat = a->repeat;
      }
      continue;
    }
    if (!a->grade) continue;
    for (std::size_t i = 0; i < a->grade->results.size(); ++i) {
      const suites::ThresholdResult& r = a->grade->results[i];
      if (i == s.thresholds.size()) s.thresholds.push_back({.worst = r, .repeat = a->repeat});
      ThresholdOverRepeats& t = s.thresholds[i];
      if (suites::worse(r, t.worst)) {
        t.worst = r;
        t.repeat = a->repeat;
      }
      ++t.graded;
    }
  }
  // Counted once the worst is known: how many repeats share its verdict.
  for (ThresholdOverRepeats& t : s.thresholds) {
    t.at_verdict = 0;
    for (const Attempt* a : finals) {
      if (a->error || !a->grade) continue;
      for (const auto& r : a->grade->results)
        if (r.threshold == t.worst.threshold && r.evaluation.verdict == t.worst.evaluation.verdict)
          ++t.at_verdict;
    }
  }
  return s;
}

std::string headline_text(const RepeatsSummary& s) {
  if (!s.headline) return "";
  const Headline& h = *s.headline;
  std::string text = fmt::format("{} {} {}", h.label, format_number(h.spread.median), h.unit);
  if (s.repeats <= 1) return text;
  const std::string of = h.spread.samples == static_cast<std::size_t>(s.repeats)
                             ? fmt::format("{} repeats", s.repeats)
                             : fmt::format("{} of {} repeats", h.spread.samples, s.repeats);
  if (h.spread.samples == 1) return fmt::format("{}, from 1 of {} repeats", text, s.repeats);
  return fmt::format("{}, median of {} ({} to {})", text, of, format_number(h.spread.low),
                     format_number(h.spread.high));
}

std::string threshold_text(const ThresholdOverRepeats& t, int repeats) {
  const suites::ThresholdResult& w = t.worst;
  if (repeats <= 1) return fmt::format("{}: {}", w.threshold, w.evaluation.detail);
  const std::string of = t.graded == repeats
                             ? fmt::format("{} of {} repeats", t.at_verdict, repeats)
                             : fmt::format("{} of {} repeats graded", t.at_verdict, t.graded);
  return fmt::format("{}: {} in {}; {}, repeat {}: {}", w.threshold,
                     verdict_words(w.evaluation.verdict), of,
                     w.evaluation.verdict == suites::Verdict::pass ? "the closest" : "the worst",
                     t.repeat + 1, w.evaluation.detail);
}

std::string retries_text(int retries) {
  return retries == 1 ? std::string("1 retry") : fmt::format("{} retries", retries);
}

std::string repeats_text(const RepeatsSummary& s) {
  std::string text = s.repeats > 1 ? fmt::format("{} repeats", s.repeats) : "";
  if (s.retries > 0) {
    if (!text.empty()) text += ", ";
    text += retries_text(s.retries) + " after a failure";
  }
  return text;
}

}  // namespace rocehil::reports
