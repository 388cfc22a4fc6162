#pragma once

#include <string>
#include <string_view>

#include "rocehil/reports/run_record.hpp"

namespace rocehil::reports {

// junit.xml, as CI systems read it: one <testsuite> for the suite, one <testcase> per test case
// (classname "<suite>.<test>", name the case id). A failed threshold is a <failure> whose message
// is the threshold's text and what its worst repeat measured (repeats.hpp); a case that could not
// be measured is an <error> naming the host and phase; a case never run is <skipped>. A test
// expected to fail passes when it failed, and is a <failure> when it did not. <system-out> gives
// the headline (the median of the repeats), the repeats and retries, and every threshold.
std::string junit_xml(const RunRecord& run);

// Text made safe for XML character data and attribute values: & < > " ' escaped, control
// characters XML 1.0 forbids replaced by '?'.
std::string xml_escape(std::string_view text);

}  // namespace rocehil::reports
