// The settings request and reply on the wire: written and read back unchanged, and refused with
// the field named when a name, value, host or action's fields are wrong.
#include <gtest/gtest.h>

#include "rocehil/agent/protocol.hpp"

namespace rocehil::agent {
namespace {

TEST(SettingsProtocol, RequestAndReplyRoundTrip) {
  SettingsRequest r;
  r.action = SettingsAction::apply;
  r.host = "gpu-a01.rack3";
  r.provider = "soft";
  r.addresses = {"198.18.1.11", "2001:db8::1"};
  r.run = "20261126-201500-smoke";
  r.values = {{"roce_rp.rpg_time_reset", "55", ""}, {"roce_np.enable", "3,4", ""}};
  const std::string line = to_json_line(Request{9, r});
  EXPECT_EQ(line, R"({"v":1,"op":"settings","id":9,"action":"apply","host":"gpu-a01.rack3",)"
                  R"("provider":"soft","addresses":["198.18.1.11","2001:db8::1"],)"
                  R"("run":"20261126-201500-smoke","values":[{"name":"roce_rp.rpg_time_reset",)"
                  R"("value":"55"},{"name":"roce_np.enable","value":"3,4"}]})");
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "");
  const auto& back = std::get<SettingsRequest>(parsed.request->body);
  EXPECT_EQ(back.values, r.values);
  EXPECT_EQ(back.addresses, r.addresses);
  EXPECT_EQ(to_json_line(*parsed.request), line);

  SettingsReply reply;
  reply.action = SettingsAction::restore;
  reply.changes = {{"roce_rp.rpg_gd", "eth1", "/sys/class/net/eth1/ecn/roce_rp/rpg_gd", "11", "9"}};
  reply.journal_found = true;
  reply.journal_run = "r1";
  reply.values = {{"roce_rp.rpg_gd", "11", "eth1"}};
  const std::string reply_line = to_json_line(Reply{9, reply});
  const ParsedReply parsed_reply = parse_reply(reply_line);
  ASSERT_EQ(parsed_reply.error, "") << reply_line;
  const auto& got = std::get<SettingsReply>(parsed_reply.reply->body);
  EXPECT_EQ(got.changes, reply.changes);
  EXPECT_EQ(got.values, reply.values);
  EXPECT_TRUE(got.journal_found);
  EXPECT_EQ(to_json_line(*parsed_reply.reply), reply_line);
}

// A journal's owner and fabric travel with apply and restore; a restore's reply names the
// journals it left alone.
TEST(SettingsProtocol, OwnersFabricsAndJournalsInUseRoundTrip) {
  const settings::JournalOwner owner{"ctl", "4c4c", "0b5e-11", 4242, 987654};
  SettingsRequest r;
  r.action = SettingsAction::restore;
  r.host = "h1";
  r.addresses = {"198.18.1.11"};
  r.fabric = "testbed-tb1";
  r.owner = owner;
  r.gone = {owner};
  r.force = true;
  const std::string line = to_json_line(Request{3, r});
  const ParsedRequest parsed = parse_request(line);
  ASSERT_EQ(parsed.error, "") << line;
  const auto& back = std::get<SettingsRequest>(parsed.request->body);
  EXPECT_EQ(back.fabric, "testbed-tb1");
  EXPECT_EQ(back.owner, owner);
  EXPECT_EQ(back.gone, std::vector<settings::JournalOwner>{owner});
  EXPECT_TRUE(back.force);
  EXPECT_EQ(to_json_line(*parsed.request), line);

  SettingsReply reply;
  reply.action = SettingsAction::restore;
  reply.in_use = {{"run-1", "2026-11-26T18:15:00Z", owner, true}};
  const std::string reply_line = to_json_line(Reply{3, reply});
  const ParsedReply parsed_reply = parse_reply(reply_line);
  ASSERT_EQ(parsed_reply.error, "") << reply_line;
  EXPECT_EQ(std::get<SettingsReply>(parsed_reply.reply->body).in_use, reply.in_use);

  r.action = SettingsAction::apply;
  r.values = {{"roce_rp.rpg_gd", "9", ""}};
  EXPECT_NE(parse_request(to_json_line(Request{4, r})).error.find("belong to a restore"),
            std::string::npos);
  r.force = false;
  r.gone.clear();
  r.fabric = "../etc";
  EXPECT_NE(parse_request(to_json_line(Request{4, r})).error, "") << "a fabric leaves no dir";
}

TEST(SettingsProtocol, ValuesAreReadInTheCataloguesSpelling) {
  const ParsedRequest p = parse_request(
      R"({"v":1,"op":"settings","action":"apply","host":"h1","addresses":["10.0.0.1"],)"
      R"("values":[{"name":"roce_np.enable","value":"4, 3"},{"name":"trust","value":"DSCP"}]})");
  ASSERT_EQ(p.error, "");
  const auto& r = std::get<SettingsRequest>(p.request->body);
  EXPECT_EQ(r.values[0].value, "3,4");
  EXPECT_EQ(r.values[1].value, "dscp");
}

TEST(SettingsProtocol, RefusesWhatCannotBeRight) {
  const auto error = [](std::string_view fields) {
    return parse_request(std::string(R"({"v":1,"op":"settings",)") + std::string(fields) + "}")
        .error;
  };
  const std::string base = R"("action":"apply","host":"h1","addresses":["10.0.0.1"],)";
  struct Case {
    std::string fields, contains;
  };
  for (const Case& c : std::vector<Case>{
           {base + R"("values":[{"name":"roce_rp.rpg_time_rest","value":"1"}])",
            "did you mean 'roce_rp.rpg_time_reset'"},
           {base + R"("values":[{"name":"roce_rp.rpg_gd","value":"16"}])", "0..15"},
           {base + R"("values":[])", "needs 'values'"},
           {R"("action":"read","host":"h1","addresses":["10.0.0.1"],)"
            R"("values":[{"name":"mtu","value":"9000"}])",
            "gives no values"},
           {R"("action":"restore","host":"h1","addresses":["10.0.0.1"],)"
            R"("values":[{"name":"mtu"}])",
            "takes no 'values'"},
           {R"("action":"apply","host":"../../etc/x","addresses":["10.0.0.1"],)"
            R"("values":[{"name":"mtu","value":"9000"}])",
            "must be a host name"},
           {R"("action":"read","host":"h1","addresses":[])", "addresses"},
           {R"("action":"read","host":"h1","addresses":["10.0.0.1; reboot"])", "address"},
           {R"("action":"wipe","host":"h1","addresses":["10.0.0.1"])", "action"},
       }) {
    const std::string e = error(c.fields);
    EXPECT_NE(e.find(c.contains), std::string::npos) << c.fields << " -> " << e;
  }
}

}  // namespace
}  // namespace rocehil::agent
