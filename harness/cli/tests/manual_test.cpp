// The manual page and the completion are generated from the real command tree: every visible
// command and option is in them, the hidden ones are not, and the roff is plain text where it
// must be.
#include "help/manual.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "help/command_tree.hpp"
#include "help/help_roff.hpp"

namespace rocehil::cli {
namespace {

std::unique_ptr<CLI::App> tree() {
  auto app = std::make_unique<CLI::App>();
  static int exit_code = 0;
  add_commands(*app, exit_code);
  return app;
}

std::string escaped(const std::string& option) {
  std::string out;
  for (const char c : option) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(Manual, EveryVisibleCommandAndOptionIsInTheManPage) {
  const auto app = tree();
  const std::string page = man_page(*app, "0.1.0", "2026-11-25");
  EXPECT_EQ(page.find(".TH ROCEHIL 1 \"2026-11-25\" \"rocehil 0.1.0\""), page.find(".TH"));
  const auto commands = visible_commands(*app);
  ASSERT_GT(commands.size(), 30u);
  for (const CommandPath& c : commands) {
    EXPECT_NE(page.find(".SS \"" + c.path + "\"\n"), std::string::npos) << c.path;
    for (const CLI::Option* o : c.app->get_options()) {
      if (o->get_group().empty()) continue;
      for (const std::string& name : o->get_lnames())
        EXPECT_NE(page.find(escaped("--" + name)), std::string::npos) << c.path << " --" << name;
    }
  }
  EXPECT_NE(page.find(".SS \"rocehil traffic client\""), std::string::npos);
  EXPECT_NE(page.find(".SS \"rocehil calibrate\""), std::string::npos);
  // Hidden commands stay hidden; the root's help says where the manual is.
  EXPECT_EQ(page.find(".SS \"rocehil man\\-page"), std::string::npos);
  EXPECT_NE(page.find("rocehil man\\-page"), std::string::npos);
  EXPECT_EQ(page.find(".SS \"rocehil completion"), std::string::npos);
  // Every line starting with '.' or '\'' is a request this generator wrote, not help text.
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || (line[0] != '.' && line[0] != '\'')) continue;
    const bool request =
        line.rfind(".TH", 0) == 0 || line.rfind(".SH", 0) == 0 || line.rfind(".SS", 0) == 0 ||
        line == ".nf" || line == ".fi" || line.rfind(".TP", 0) == 0 || line.rfind(".B", 0) == 0 ||
        line.rfind(".I", 0) == 0 || line.rfind(".PP", 0) == 0 || line.rfind(".PD", 0) == 0 ||
        line.rfind(".RS", 0) == 0 || line == ".RE" || line == ".br" || line == ".nh" ||
        line == ".ad l" || line.rfind(".\\\"", 0) == 0;
    EXPECT_TRUE(request) << line;
  }
}

TEST(Manual, TheCompletionKnowsEveryPathAndItsOptions) {
  const auto app = tree();
  const std::string script = bash_completion(*app);
  for (const CommandPath& c : visible_commands(*app))
    EXPECT_NE(script.find("\"" + c.path + "\") path=\"$candidate\""), std::string::npos) << c.path;
  const auto words_at = [&](const std::string& path) {
    const auto at = script.find("    \"" + path + "\") words=\"");
    if (at == std::string::npos) return std::string();
    const auto start = script.find('"', script.find("words=", at)) + 1;
    return " " + script.substr(start, script.find('"', start) - start) + " ";
  };
  EXPECT_NE(words_at("rocehil").find(" calibrate "), std::string::npos);
  EXPECT_NE(words_at("rocehil").find(" --version "), std::string::npos);
  EXPECT_EQ(words_at("rocehil").find("man-page"), std::string::npos);
  EXPECT_NE(words_at("rocehil traffic").find(" client "), std::string::npos);
  EXPECT_NE(words_at("rocehil traffic client").find(" --engine "), std::string::npos);
  EXPECT_NE(words_at("rocehil calibrate").find(" -i "), std::string::npos);
  EXPECT_NE(words_at("rocehil calibrate").find(" --rounds "), std::string::npos);
}

TEST(HelpRoff, ProseIsFilledAndASentenceEndingItsLineKeepsTheBreak) {
  const std::string roff = roff_from_help(
      "A flow is (IP src, IP dst,\nBTH dest QP) over RoCEv2.\nExit codes: 0 read.\n\nNext one.");
  EXPECT_EQ(roff,
            ".PP\nA flow is (IP src, IP dst,\nBTH dest QP) over RoCEv2.\n.br\nExit codes: 0 read.\n"
            ".PP\nNext one.\n");
}

TEST(HelpRoff, ATermWithTextIsATaggedParagraphWithItsContinuation) {
  const std::string roff = roff_from_help(
      "What goes out:\n"
      "  PFC (802.1Qbb)  MAC control frame to 01:80:c2:00:00:01, EtherType 0x8808, opcode\n"
      "                  0x0101: a class-enable vector\n"
      "  PAUSE (802.3x)  Same address and EtherType.\n");
  EXPECT_EQ(roff,
            ".PP\nWhat goes out:\n.PD 0\n.PP\n"
            ".TP 16\nPFC (802.1Qbb)\nMAC control frame to 01:80:c2:00:00:01, EtherType 0x8808, "
            "opcode 0x0101: a class\\-enable vector\n"
            ".TP 16\nPAUSE (802.3x)\nSame address and EtherType.\n.PD\n");
}

TEST(HelpRoff, ALongExampleIsCutAtASpaceOutsideQuotesAndEndsInABackslash) {
  const std::string roff = roff_from_help(
      "  rocehil bisect -s smoke.yaml --only 'p2p bw' --candidates rates.txt  the description\n",
      40);
  EXPECT_EQ(roff,
            ".PP\n.PD 0\n.PP\n.nf\n"
            "  rocehil bisect \\-s smoke.yaml \\-\\-only \\e\n"
            "      'p2p bw' \\-\\-candidates rates.txt\n"
            ".fi\n.RS 8\nthe description\n.RE\n.PD\n");
}

TEST(HelpRoff, ACommandGoesOnInsideDoubleQuotesAndAfterABackslash) {
  const std::string roff = roff_from_help(
      "  rocehil capture --dpdk-args \"--no-huge\n"
      "        --vdev=net_pcap0\" \\\n"
      "        --json\n"
      "        (replays a file)\n");
  EXPECT_EQ(roff,
            ".PP\n.PD 0\n.PP\n.nf\n"
            "  rocehil capture \\-\\-dpdk\\-args \"\\-\\-no\\-huge\n"
            "        \\-\\-vdev=net_pcap0\" \\e\n"
            "        \\-\\-json\n"
            ".fi\n.RS 8\n(replays a file)\n.RE\n.PD\n");
}

TEST(HelpRoff, AnUncuttableTokenIsCutAfterAComma) {
  const std::string roff = roff_from_help("  {\"v\":1,\"op\":\"setup\",\"id\":2}\n", 24);
  EXPECT_NE(roff.find("  {\"v\":1,\"op\":\"setup\",\n      \"id\":2}\n"), std::string::npos)
      << roff;
}

}  // namespace
}  // namespace rocehil::cli
