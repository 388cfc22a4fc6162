#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocehil/testbed/switch_counters.hpp"

namespace rocehil::testbed {

// The switch counters as snmpd serves them: a `pass_persist` handler (snmpd.conf(5)) speaking
// on its stdin/stdout, one per MIB subtree, under the OIDs a SONiC switch serves them.

using Oid = std::vector<std::uint32_t>;  // std::vector's < is SNMP's lexicographic OID order

// "1.3.6.1" or ".1.3.6.1"; nullopt for anything else.
std::optional<Oid> parse_oid(std::string_view text);
std::string format_oid(const Oid& oid);  // ".1.3.6.1", as snmpd writes them

std::string_view to_string(CounterMib mib);
std::optional<CounterMib> counter_mib_from(std::string_view name);

// The subtree snmpd hands the handler: 1.3.6.1.4.1.9.9.813 or 1.3.6.1.4.1.9.9.580.1.5.5.
Oid mib_root(CounterMib mib);

// Every value of `mib` for `ports`, all Counter64.
using CounterTable = std::map<Oid, std::uint64_t>;
CounterTable counter_table(CounterMib mib, const std::vector<PortCounters>& ports);

// The pass_persist protocol: PING -> PONG; get OID -> OID, type, value or NONE; getnext OID ->
// the first OID after it, in OID order, or NONE past the last; set -> not-writable. Pure: the
// counters come from `read`, called again when the last reading is older than `max_age`, counted
// from the reading's end (a walk is hundreds of getnexts, each its own request). A getnext from
// a row of the current reading (a walk's next step, or a GETBULK's next row in any of its
// columns) is served from that reading, up to `walk_limit`: one poll sees one reading, however
// its columns interleave with each other and with another handler's (the PFC and queue handlers,
// each a few processes to read).
class PassPersist {
 public:
  using Clock = std::chrono::steady_clock;
  using Reader = std::function<std::vector<PortCounters>()>;
  using Now = std::function<Clock::time_point()>;

  // `now` is asked as each line arrives and as each reading ends (a test passes its own).
  PassPersist(CounterMib mib, Reader read, Now now = Clock::now,
              std::chrono::milliseconds max_age = std::chrono::milliseconds(100));

  // One line from snmpd, without its newline; the reply to write (whole lines), empty while a
  // command still waits for its arguments.
  std::string feed(std::string_view line);

 private:
  std::string answer_get(const std::string& oid_text, bool next);
  const CounterTable& table(bool continues_walk);

  CounterMib mib_;
  Reader read_;
  Now now_;
  std::chrono::milliseconds max_age_;
  CounterTable table_;
  std::optional<Clock::time_point> read_at_;
  std::string command_;  // get, getnext or set, until its arguments arrive
  std::vector<std::string> arguments_;
};

}  // namespace rocehil::testbed
