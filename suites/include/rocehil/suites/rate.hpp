#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rocehil::suites {

// How fast a sender sends (`rate:` in a suite; docs/suites.md, "Pacing"): a share of its NIC's
// link, as the SONiC RoCEv2 test plan asks ("55% per port"), or bits per second on the wire's
// payload, as iperf3's -b and perftest's --rate_limit take it.
struct Rate {
  bool percent = false;  // `value` is a percentage of the sender's link, in (0, 100]
  double value = 0;      // the percentage, or bits per second
  std::string text;      // as written, for messages and run.json

  // Bits per second at a link of `link_bps`.
  double bits_per_s(double link_bps) const { return percent ? value / 100 * link_bps : value; }
};

// "55%", "12.5%", "25Gbit/s", "400Mbit/s", "100Kbit/s", "2500000bit/s". Empty, with `why`
// set, when it is none of those or out of range (0 < percent <= 100; 1 Kbit/s to 1.6 Tbit/s).
std::optional<Rate> parse_rate(std::string_view text, std::string& why);

}  // namespace rocehil::suites
