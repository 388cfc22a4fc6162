#include "history/history_text.hpp"

#include <gtest/gtest.h>

namespace rocehil::cli {
namespace {

using reports::kind_of_run;
using reports::RunKind;

reports::History::RunRow row(std::string id, reports::RunKindInfo kind) {
  reports::History::RunRow r;
  r.run_id = std::move(id);
  r.started_at = "2026-11-22T01:00:00Z";
  r.suite = "nightly";
  r.exit_code = 0;
  r.cases = 12;
  r.passed = 12;
  r.kind = std::move(kind);
  return r;
}

const std::vector<reports::History::RunRow> rows = {
    row("r4", kind_of_run(RunKind::bisect, "incast*", {"switch.ecn_mark_mbps=250"})),
    row("r3", kind_of_run(RunKind::full, "p2p*", {"roce_rp.rpg_gd=9"})),
    row("r2", kind_of_run(RunKind::full, "", {"roce_rp.rpg_gd=9", "roce_np.cnp_dscp=46"})),
    row("r1", kind_of_run(RunKind::full, "", {})),
};

std::string line_of(const std::string& text, const std::string& start) {
  const auto at = text.find("  " + start + " ");
  if (at == std::string::npos) return {};
  return text.substr(at, text.find('\n', at) - at);
}

TEST(HistoryText, EveryRowSaysItsKindAndWhatMadeItPartial) {
  const std::string text = render_history(rows, "h.db");
  EXPECT_NE(text.find("kind"), std::string::npos) << text;
  EXPECT_NE(line_of(text, "r4").find("bisect switch.ecn_mark_mbps=250 "), std::string::npos)
      << text;
  EXPECT_NE(line_of(text, "r3").find("only p2p* "), std::string::npos) << text;
  EXPECT_NE(line_of(text, "r2").find("set roce_rp.rpg_gd=9 +1 "), std::string::npos) << text;
  EXPECT_NE(line_of(text, "r1").find(" full "), std::string::npos) << text;
  EXPECT_NE(text.find("4 run(s) in h.db"), std::string::npos) << text;
}

TEST(HistoryText, TheJsonHasTheKindItsOnlyAndItsSet) {
  const auto j = history_json(rows, "h.db");
  ASSERT_EQ(j["runs"].size(), 4u);
  EXPECT_EQ(j["runs"][0]["kind"], "bisect");
  EXPECT_EQ(j["runs"][0]["only"], "incast*");
  EXPECT_EQ(j["runs"][1]["kind"], "only");
  EXPECT_EQ(j["runs"][1]["set"], nlohmann::ordered_json::array({"roce_rp.rpg_gd=9"}));
  EXPECT_EQ(j["runs"][2]["kind"], "set");
  EXPECT_TRUE(j["runs"][2]["only"].is_null());
  EXPECT_EQ(j["runs"][3]["kind"], "full");
  EXPECT_TRUE(j["runs"][3]["set"].empty());
  EXPECT_EQ(j["runs"][3]["cases"], 12);  // the counts are still there
}

}  // namespace
}  // namespace rocehil::cli
