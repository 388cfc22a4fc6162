// The selftest's checklist as a terminal shows it: one line per check with its verdict and why,
// then the verdict and the file to attach to a bug.
#include "runs/selftest_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "rocehil/run/selftest.hpp"
#include "shared/text_table.hpp"

namespace rocehil::cli {

namespace {

std::string upper(run::CheckVerdict v) {
  std::string text(to_string(v));
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return text;
}

}  // namespace

std::string render_selftest_text(const run::SelftestReport& report, std::string_view file) {
  TextTable table({{"check", TextTable::Align::left},
                   {"verdict", TextTable::Align::left},
                   {"detail", TextTable::Align::left}});
  for (const auto& c : report.checks) table.add_row({c.name, upper(c.verdict), c.detail});
  const auto skipped = std::count_if(
      report.checks.begin(), report.checks.end(),
      [](const run::SelftestCheck& c) { return c.verdict == run::CheckVerdict::skip; });
  return fmt::format(
      "\nselftest checks:\n{}\nselftest: {} ({} of {} checks skipped, each with its reason)\n"
      "attach to a bug report: {}\n",
      table.render(), upper(report.verdict), skipped, report.checks.size(), file);
}

}  // namespace rocehil::cli
