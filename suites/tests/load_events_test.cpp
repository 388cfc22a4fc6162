#include "load_events.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rocehil/suites/suite.hpp"
#include "suite_errors.hpp"

namespace rocehil::suites {
namespace {

using testing::errors_of;

constexpr std::string_view events_head =
    "schema_version: 1\nname: x\ntests:\n  - name: flap\n    workload: bw\n"
    "    duration_s: 8\n";

Suite suite_with_events(std::string_view text) {
  SuiteLoadResult r = parse_suite(text, "s.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << inventory::to_string(d);
  EXPECT_TRUE(r.suite.has_value());
  return r.suite.value_or(Suite{});
}

TEST(SuiteEvents, EveryActionIsReadWithItsKeysInTheOrderTheyHappen) {
  const Suite s =
      suite_with_events(std::string(events_head) +
                        "    events:\n"
                        "      - {at_s: 6, action: link_up, link: l1-s1}\n"
                        "      - {at_s: 2, action: link_down, link: l1-s1}\n"
                        "      - {at_s: 3, action: nic_down, host: h3}\n"
                        "      - {at_s: 4, action: nic_up, host: h3}\n"
                        "      - {at_s: 1, action: pfc, from: s1, link: l1-s1, priority: 3,\n"
                        "         quanta: 65535, pps: 10000, duration_s: 0.5}\n"
                        "      - {at_s: 5, action: command, switch: s1, command: drain}\n"
                        "      - {at_s: 5.5, action: command, host: h1, command: ping}\n");
  const std::vector<Event>& e = s.tests[0].events;
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[0].action, EventAction::pfc);
  EXPECT_EQ(e[0].at_s, 1);
  EXPECT_EQ(e[0].pfc.from, "s1");
  EXPECT_EQ(e[0].pfc.link, "l1-s1");
  EXPECT_EQ(e[0].pfc.priorities, (std::vector<int>{3}));
  EXPECT_EQ(e[0].pfc.after_s, 1);
  EXPECT_EQ(e[0].pfc.duration_s, 0.5);
  EXPECT_EQ(e[0].where.line, 12);
  EXPECT_FALSE(e[0].from_inject);
  EXPECT_EQ(e[1].action, EventAction::link_down);
  EXPECT_EQ(e[1].link, "l1-s1");
  EXPECT_EQ(e[2].action, EventAction::nic_down);
  EXPECT_EQ(e[2].host, "h3");
  EXPECT_EQ(e[3].action, EventAction::nic_up);
  EXPECT_EQ(e[4].action, EventAction::command);
  EXPECT_EQ(e[4].switch_name, "s1");
  EXPECT_EQ(e[4].command, "drain");
  EXPECT_EQ(e[5].host, "h1");
  EXPECT_EQ(e[5].switch_name, "");
  EXPECT_EQ(e[6].action, EventAction::link_up);
  EXPECT_EQ(e[6].at_s, 6);
  EXPECT_EQ(to_string(e[6].action), "link_up");
  EXPECT_FALSE(s.tests[0].inject.has_value());
}

TEST(SuiteEvents, InjectIsOnePfcEventAtItsAfterS) {
  const Suite s =
      suite_with_events(std::string(events_head) +
                        "    inject: {from: s1, link: l1-s1, priority: [3, 4], after_s: 1.5}\n"
                        "    events:\n"
                        "      - {at_s: 0.5, action: link_down, link: l2-s1}\n");
  const SuiteTest& t = s.tests[0];
  ASSERT_TRUE(t.inject.has_value());
  ASSERT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.events[0].action, EventAction::link_down);
  const Event& pfc = t.events[1];
  EXPECT_EQ(pfc.action, EventAction::pfc);
  EXPECT_TRUE(pfc.from_inject);
  EXPECT_EQ(pfc.at_s, 1.5);
  EXPECT_EQ(pfc.pfc.priorities, (std::vector<int>{3, 4}));
  EXPECT_EQ(pfc.pfc.after_s, 1.5);
  EXPECT_EQ(pfc.where.line, 7);
}

TEST(SuiteEvents, AnUnknownActionAndAMissingOneAreSaidWithTheActionsThereAre) {
  EXPECT_EQ(
      errors_of(std::string(events_head) + "    events:\n"
                                           "      - {at_s: 2, action: link_flap, link: l1-s1}\n"
                                           "      - {at_s: 2, link: l1-s1}\n"
                                           "      - link_down\n"),
      (std::vector<std::string>{
          "s.yaml:8:27: test 'flap': event action 'link_flap' is unknown; use one of "
          "link_down, link_up, nic_down, nic_up, pfc, command",
          "s.yaml:9:9: test 'flap': event has no 'action'; add one, e.g. 'action: "
          "link_down' (one of link_down, link_up, nic_down, nic_up, pfc, command)",
          "s.yaml:10:9: test 'flap': an event is a map such as '{at_s: 2, action: "
          "link_down, link: l1-s1}'"}));
}

TEST(SuiteEvents, EachActionTakesItsOwnKeysAndNoOthers) {
  EXPECT_EQ(errors_of(std::string(events_head) +
                      "    events:\n"
                      "      - {at_s: 2, action: link_down, host: h3}\n"
                      "      - {action: nic_down, host: h3}\n"
                      "      - {at_s: 3, action: nic_up, host: h3, link: l1-s1}\n"
                      "      - {at_s: 4, action: command, command: drain}\n"
                      "      - {at_s: 4, action: command, host: h1, switch: s1, command: x}\n"
                      "      - {at_s: 4, action: pfc, from: s1, link: l1-s1, after_s: 1}\n"
                      "      - {at_s: 4, action: link_down, link: 'l1 s1'}\n"),
            (std::vector<std::string>{
                "s.yaml:8:9: test 'flap': event link_down has no 'link'; add one, e.g. 'link: "
                "l1-s1'",
                "s.yaml:8:38: unknown key 'host' in test 'flap': event link_down; valid keys: "
                "at_s, action, link",
                "s.yaml:9:9: test 'flap': event nic_down has no 'at_s'; add one, e.g. 'at_s: 2'",
                // Its nic_down was refused, so nothing took the host down.
                "s.yaml:10:9: test 'flap': event nic_up: no earlier event takes host h3 down, so "
                "there is nothing to bring up; add a nic_down before at_s 3, or drop this one",
                "s.yaml:10:45: unknown key 'link' in test 'flap': event nic_up; valid keys: at_s, "
                "action, host",
                "s.yaml:11:9: test 'flap': event command: give one of 'host' and 'switch' "
                "(where the inventory's command runs), e.g. 'switch: s1'",
                "s.yaml:12:9: test 'flap': event command: give one of 'host' and 'switch' "
                "(where the inventory's command runs), e.g. 'switch: s1'",
                "s.yaml:13:55: unknown key 'after_s' in test 'flap': event pfc; valid keys: at_s, "
                "action, kind, from, link, priority, quanta, pps, duration_s",
                "s.yaml:14:44: test 'flap': event link_down: link 'l1 s1' is not an inventory "
                "name"}));
}

TEST(SuiteEvents, AnEventAfterTheTrafficAndAnUpWithoutADownAreRefused) {
  EXPECT_EQ(
      errors_of(std::string(events_head) + "    inject: {from: s1, link: l1-s1, after_s: 9}\n"
                                           "    events:\n"
                                           "      - {at_s: 8, action: link_down, link: l1-s1}\n"
                                           "      - {at_s: 1, action: link_up, link: l1-s1}\n"
                                           "      - {at_s: 3, action: nic_down, host: h3}\n"
                                           "      - {at_s: 3, action: nic_up, host: h3}\n"),
      (std::vector<std::string>{
          "s.yaml:7:13: test 'flap': inject: at 9 s the traffic is over (it runs for "
          "duration_s 8 s); happen earlier, or run the test longer",
          "s.yaml:9:9: test 'flap': event link_down: at 8 s the traffic is over (it runs "
          "for duration_s 8 s); happen earlier, or run the test longer",
          "s.yaml:10:9: test 'flap': event link_up: no earlier event takes link l1-s1 "
          "down, so there is nothing to bring up; add a link_down before at_s 1, or drop "
          "this one",
          "s.yaml:12:9: test 'flap': event nic_up: no earlier event takes host h3 down, "
          "so there is nothing to bring up; add a nic_down before at_s 3, or drop this "
          "one"}));
  // A collective runs its iterations, however long they take: any at_s may fall inside them.
  const Suite s = suite_with_events(
      "schema_version: 1\nname: x\ntests:\n  - name: ring\n    workload: allreduce\n"
      "    events:\n      - {at_s: 30, action: link_down, link: l1-s1}\n");
  EXPECT_EQ(s.tests[0].events.size(), 1u);
}

TEST(SuiteEvents, EventsMustBeAList) {
  EXPECT_EQ(errors_of(std::string(events_head) + "    events: {at_s: 2, action: link_down}\n"),
            (std::vector<std::string>{
                "s.yaml:7:13: test 'flap': events must be a list, one '- {at_s: 2, action: "
                "link_down, link: l1-s1}' per event"}));
}

// docs/suites.md's example of every action is a test this loader takes.
TEST(SuiteEvents, TheDocsExampleLoads) {
  std::ifstream in(std::string(ROCEHIL_DOCS_DIR) + "/suites.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::size_t section = doc.find("### Events");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = doc.find("```yaml\n", section) + 8;
  const std::size_t end = doc.find("```", begin);
  const Suite s =
      suite_with_events("schema_version: 1\nname: x\ntests:\n" + doc.substr(begin, end - begin));
  ASSERT_EQ(s.tests.size(), 1u);
  EXPECT_EQ(s.tests[0].events.size(), 6u);
}

}  // namespace
}  // namespace rocehil::suites
