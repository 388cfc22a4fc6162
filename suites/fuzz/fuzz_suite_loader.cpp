// libFuzzer target: any bytes as a suite file. parse_suite must never crash or throw; it returns
// a suite or diagnostics, never both; every diagnostic is one printable line of bounded length;
// and whatever loads expands to at least one case per test, each with a distinct id.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_checks.hpp"
#include "rocehil/suites/suite.hpp"

namespace suites = rocehil::suites;

namespace {

[[noreturn]] void fail(const char* what, std::string_view detail) {
  rocehil::fuzz::fail("fuzz_suite_loader", what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const suites::SuiteLoadResult r = suites::parse_suite(text, "fuzz.yaml");
  if (r.suite.has_value() == !r.diagnostics.empty()) fail("suite and diagnostics", "");
  for (const auto& d : r.diagnostics) rocehil::fuzz::check_diagnostic("fuzz_suite_loader", d, 800);
  if (r.suite) {
    // Sweeps multiply; a fuzzed suite stays small enough to expand.
    const auto cases = suites::expand(*r.suite);
    if (cases.size() < r.suite->tests.size()) fail("a test without cases", "");
    std::set<std::string> ids;
    for (const auto& c : cases)
      if (!ids.insert(c.id).second) fail("two cases with one id", c.id);
  }
  return 0;
}
