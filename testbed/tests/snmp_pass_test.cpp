#include "rocehil/testbed/snmp_pass.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "dataplane/shared_counters.hpp"

namespace rocehil::testbed {
namespace {

using namespace std::chrono_literals;
using Clock = PassPersist::Clock;

std::vector<PortCounters> two_ports() {
  PortCounters h1{"t1-h1", 5, {}, {}, {QueueCounters{789, 123456, 12, std::nullopt}}};
  h1.pfc_received[3] = 7;
  h1.pfc_received[4] = 2;
  h1.pfc_sent[3] = 5;
  PortCounters s1{"t1-s1", 12, {}, {}, {}};
  s1.pfc_sent[0] = 1;
  return {h1, s1};
}

TEST(SnmpPass, OidsParseWithOrWithoutTheLeadingDot) {
  EXPECT_EQ(parse_oid(".1.3.6.1"), (Oid{1, 3, 6, 1}));
  EXPECT_EQ(parse_oid("1.3.6.1"), (Oid{1, 3, 6, 1}));
  EXPECT_EQ(parse_oid("1.3.4294967295"), (Oid{1, 3, 4294967295u}));
  for (const char* bad : {"", ".", "1..3", "1.3.", "1.x", "1.3.4294967296", "-1"})
    EXPECT_FALSE(parse_oid(bad)) << bad;
  EXPECT_EQ(format_oid({1, 3, 6, 1, 4, 1, 9}), ".1.3.6.1.4.1.9");
}

TEST(SnmpPass, PfcTableServesBothCiscoTablesPerPortAndPriority) {
  const CounterTable t = counter_table(CounterMib::pfc, two_ports());
  // cpfcIfTable: requests (sent) and indications (received), summed over priorities.
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.1.1.1.5")), 5u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.1.1.2.5")), 9u);
  // cpfcIfPriorityTable: 2 requests, 3 indications, index ifIndex.priority.
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.2.1.2.5.3")), 5u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.2.1.3.5.3")), 7u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.2.1.3.5.4")), 2u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.2.1.2.12.0")), 1u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.813.1.2.1.3.12.7")), 0u);
  // Two ports: 2 x 2 interface rows, 2 x 2 x 8 priority rows.
  EXPECT_EQ(t.size(), 4u + 32u);
}

TEST(SnmpPass, QosTableHasRowsForShapedPortsOnly) {
  const CounterTable t = counter_table(CounterMib::qos, two_ports());
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.580.1.5.5.1.4.5.2.1.1")), 789u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.580.1.5.5.1.4.5.2.1.2")), 123456u);
  EXPECT_EQ(t.at(*parse_oid("1.3.6.1.4.1.9.9.580.1.5.5.1.4.5.2.1.5")), 12u);
}

// A lossless switch (--lossless): 8 queues per port, counted by its forwarding process into its
// counters file and read back from there as the handler does, each with bytes dropped (type 6),
// which a tbf does not count.
TEST(SnmpPass, QosTableServesALosslessSwitchsEightQueuesFromItsCountersFile) {
  const std::string path = ::testing::TempDir() + "snmp_pass_lossless.counters";
  dataplane::SharedCountersWriter w(path, {"t1-s1", "t1-h1"});
  for (int port = 0; port < 2; ++port) {
    w.port(port).ifindex.store(port == 0 ? 12 : 5);
    for (int tc = 0; tc < 8; ++tc) {
      auto& q = w.port(port).queue[tc];
      // Digits: port, class, field; so a row served under the wrong index reads wrong.
      const std::uint64_t base = 1000 * (port + 1) + 10 * tc;
      dataplane::bump(q.packets, base + 1);
      dataplane::bump(q.bytes, base + 2);
      dataplane::bump(q.dropped, base + 5);
      dataplane::bump(q.dropped_bytes, base + 6);
      dataplane::bump(q.ecn_marked, 99);  // not served: the MIB has no column for it
    }
  }
  const auto ports = lossless_ports(dataplane::read_shared_counters(path), {});
  ASSERT_EQ(ports.size(), 2u);
  const CounterTable t = counter_table(CounterMib::qos, ports);
  EXPECT_EQ(t.size(), 2u * 8 * 4);
  CounterTable expected;
  for (std::uint32_t port = 0; port < 2; ++port)
    for (std::uint32_t tc = 0; tc < 8; ++tc)
      for (std::uint32_t type : {1u, 2u, 5u, 6u})
        expected[*parse_oid(fmt::format("1.3.6.1.4.1.9.9.580.1.5.5.1.4.{}.2.{}.{}",
                                        port == 0 ? 12 : 5, tc + 1, type))] =
            1000 * (port + 1) + 10 * tc + type;
  EXPECT_EQ(t, expected);
  // A walk goes port by port, queue by queue: the first rows are port 5's queue 1.
  EXPECT_EQ(format_oid(t.begin()->first), ".1.3.6.1.4.1.9.9.580.1.5.5.1.4.5.2.1.1");
  EXPECT_EQ(format_oid(std::next(t.begin(), 4)->first), ".1.3.6.1.4.1.9.9.580.1.5.5.1.4.5.2.2.1");
}

// A handler on a clock of its own: time moves only when the test moves it, or by
// `reading_takes` while the counters are read.
struct Handler {
  int reads = 0;
  Clock::duration reading_takes{};
  Clock::time_point now = Clock::time_point{} + 1h;
  PassPersist pass{CounterMib::pfc,
                   [this] {
                     ++reads;
                     now += reading_takes;
                     return two_ports();
                   },
                   [this] { return now; }};

  std::string ask(std::initializer_list<std::string_view> lines) {
    std::string out;
    for (auto l : lines) out += pass.feed(l);
    return out;
  }
};

TEST(SnmpPass, PingGetAndSetSpeakSnmpdsProtocol) {
  Handler h;
  EXPECT_EQ(h.ask({"PING"}), "PONG\n");
  EXPECT_EQ(h.ask({"get"}), "");  // waits for the OID
  EXPECT_EQ(h.ask({".1.3.6.1.4.1.9.9.813.1.2.1.3.5.3"}),
            ".1.3.6.1.4.1.9.9.813.1.2.1.3.5.3\ncounter64\n7\n");
  EXPECT_EQ(h.ask({"get", ".1.3.6.1.4.1.9.9.813.1.2.1.3.5.9"}), "NONE\n");  // no priority 9
  EXPECT_EQ(h.ask({"get", ".1.3.6.1.4.1.9.9.813.1.2.1"}), "NONE\n");        // not an instance
  EXPECT_EQ(h.ask({"get", "garbage"}), "NONE\n");
  EXPECT_EQ(h.ask({"set", ".1.3.6.1.4.1.9.9.813.1.2.1.3.5.3"}), "");  // waits for the value
  EXPECT_EQ(h.ask({"counter64 0"}), "not-writable\n");
  EXPECT_EQ(h.ask({"PING\r"}), "PONG\n");  // and is ready for the next command
}

TEST(SnmpPass, GetnextWalksInOidOrderAndEndsWithNone) {
  Handler h;
  // From the subtree's root: the first row, cpfcIfRequests of the lowest ifIndex.
  EXPECT_EQ(h.ask({"getnext", ".1.3.6.1.4.1.9.9.813"}),
            ".1.3.6.1.4.1.9.9.813.1.1.1.1.5\ncounter64\n5\n");
  // ifIndex 5 before 12 (numeric order, not text order), then the next column.
  EXPECT_EQ(h.ask({"getnext", ".1.3.6.1.4.1.9.9.813.1.1.1.1.5"}),
            ".1.3.6.1.4.1.9.9.813.1.1.1.1.12\ncounter64\n1\n");
  EXPECT_EQ(h.ask({"getnext", ".1.3.6.1.4.1.9.9.813.1.1.1.1.12"}),
            ".1.3.6.1.4.1.9.9.813.1.1.1.2.5\ncounter64\n9\n");
  // Between rows: the next one after it.
  EXPECT_EQ(h.ask({"getnext", ".1.3.6.1.4.1.9.9.813.1.2.1.2.5.2.99"}),
            ".1.3.6.1.4.1.9.9.813.1.2.1.2.5.3\ncounter64\n5\n");
  EXPECT_EQ(h.ask({"getnext", ".1.3.6.1.4.1.9.9.813.1.2.1.3.12.7"}), "NONE\n");
  // A whole walk: 36 rows, each strictly after the one before.
  std::string oid = ".1.3.6.1.4.1.9.9.813";
  int rows = 0;
  while (true) {
    const std::string reply = h.ask({"getnext", oid});
    if (reply == "NONE\n") break;
    const std::string next = reply.substr(0, reply.find('\n'));
    ASSERT_LT(*parse_oid(oid), *parse_oid(next));
    oid = next;
    ++rows;
  }
  EXPECT_EQ(rows, 36);
}

TEST(SnmpPass, CountersAreReadAgainOnlyWhenOlderThanTheMaximumAge) {
  Handler h;
  h.ask({"get", ".1.3.6.1.4.1.9.9.813.1.1.1.1.5"});
  h.ask({"getnext", ".1.3.6.1.4.1.9.9.813"});
  EXPECT_EQ(h.reads, 1);
  h.now += 100ms;
  h.ask({"getnext", ".1.3.6.1.4.1.9.9.813"});
  EXPECT_EQ(h.reads, 1);
  h.now += 1ms;
  h.ask({"getnext", ".1.3.6.1.4.1.9.9.813"});
  EXPECT_EQ(h.reads, 2);
  h.ask({"PING"});  // a ping reads nothing
  EXPECT_EQ(h.reads, 2);
}

// A reading slower than the maximum age (processes on a busy machine) is still one reading per
// walk: snmpd's next getnext comes right after the reply, so its age counts from the reading's
// end, not its start.
TEST(SnmpPass, AReadingSlowerThanTheMaximumAgeServesTheWholeWalk) {
  Handler h;
  h.reading_takes = 150ms;
  std::string oid = ".1.3.6.1.4.1.9.9.813";
  int rows = 0;
  for (;; ++rows) {
    const std::string reply = h.ask({"getnext", oid});
    if (reply == "NONE\n" || rows > 100) break;
    oid = reply.substr(0, reply.find('\n'));
    h.now += 1ms;  // snmpd's next request, right after the reply
  }
  EXPECT_EQ(rows, 36);
  EXPECT_EQ(h.reads, 1);
  // Nor does a get right after a slow reading read again (counted from its start it would).
  h.now += 200ms;
  h.ask({"get", ".1.3.6.1.4.1.9.9.813.1.1.1.1.5"});
  h.now += 50ms;
  h.ask({"get", ".1.3.6.1.4.1.9.9.813.1.1.1.1.5"});
  EXPECT_EQ(h.reads, 2);
}

// A GETBULK of this handler's columns and another's interleaves them: each handler's getnexts go
// on from its own last answer however long the other takes to read, and are served from the
// reading the walk began with; a walk that starts again reads again.
TEST(SnmpPass, AWalkIsServedFromTheReadingItBeganWith) {
  Handler h;
  std::string oid = ".1.3.6.1.4.1.9.9.813";
  for (int row = 0; row < 10; ++row) {
    const std::string reply = h.ask({"getnext", oid});
    oid = reply.substr(0, reply.find('\n'));
    h.now += 300ms;  // the other handler's reading, between this one's rows
  }
  EXPECT_EQ(h.reads, 1);
  const std::string first = h.ask({"getnext", ".1.3.6.1.4.1.9.9.813"});  // a new walk: reads
  EXPECT_EQ(h.reads, 2);
  h.now += 9s;
  const std::string second = h.ask({"getnext", first.substr(0, first.find('\n'))});
  EXPECT_EQ(h.reads, 2);
  h.now += 11s;  // a walk left hanging does not serve a stale reading forever
  h.ask({"getnext", second.substr(0, second.find('\n'))});
  EXPECT_EQ(h.reads, 3);
}

// A GETBULK of several of this handler's columns (the poller asks for the four PFC columns at
// once): snmpd asks each column's next row in turn, so no getnext follows this handler's last
// answer, yet every row after the first of each column continues the walk of one reading. Read
// once a row, it took the testbed's switches about a second to answer each poll.
TEST(SnmpPass, AGetbulkOfSeveralColumnsIsServedFromOneReading) {
  Handler h;
  h.reading_takes = 150ms;
  std::vector<std::string> cursors = {
      ".1.3.6.1.4.1.9.9.813.1.1.1.1", ".1.3.6.1.4.1.9.9.813.1.1.1.2",
      ".1.3.6.1.4.1.9.9.813.1.2.1.2", ".1.3.6.1.4.1.9.9.813.1.2.1.3"};
  std::vector<std::string> first_rows;
  for (int row = 0; row < 2; ++row) {
    for (auto& cursor : cursors) {
      const std::string reply = h.ask({"getnext", cursor});
      ASSERT_NE(reply, "NONE\n");
      cursor = reply.substr(0, reply.find('\n'));
      if (row == 0) first_rows.push_back(cursor);
      // A GETBULK's first rows come together; after them the other handler's reading can stand
      // between two rows of one column, longer than the maximum age.
      h.now += row == 0 ? 1ms : 120ms;
    }
  }
  EXPECT_EQ(h.reads, 1);
  EXPECT_EQ(first_rows[0], ".1.3.6.1.4.1.9.9.813.1.1.1.1.5");
  EXPECT_EQ(first_rows[3], ".1.3.6.1.4.1.9.9.813.1.2.1.3.5.0");
  // A column's first getnext names no row: the next poll reads again.
  h.ask({"getnext", ".1.3.6.1.4.1.9.9.813.1.1.1.1"});
  EXPECT_EQ(h.reads, 2);
}

TEST(SnmpPass, CountersThatCannotBeReadAreAbsentUntilTheNextReading) {
  bool fail = true;
  Clock::time_point now{};
  PassPersist pass(
      CounterMib::pfc,
      [&fail]() -> std::vector<PortCounters> {
        if (fail) throw std::runtime_error("nft failed");
        return two_ports();
      },
      [&now] { return now; });
  pass.feed("getnext");
  EXPECT_EQ(pass.feed(".1.3.6.1.4.1.9.9.813"), "NONE\n");
  fail = false;
  now += 200ms;
  pass.feed("getnext");
  EXPECT_EQ(pass.feed(".1.3.6.1.4.1.9.9.813"), ".1.3.6.1.4.1.9.9.813.1.1.1.1.5\ncounter64\n5\n");
}

TEST(SnmpPass, MibNamesAndRoots) {
  EXPECT_EQ(counter_mib_from("pfc"), CounterMib::pfc);
  EXPECT_EQ(counter_mib_from("qos"), CounterMib::qos);
  EXPECT_FALSE(counter_mib_from("ifmib"));
  EXPECT_EQ(format_oid(mib_root(CounterMib::qos)), ".1.3.6.1.4.1.9.9.580.1.5.5");
}

}  // namespace
}  // namespace rocehil::testbed
