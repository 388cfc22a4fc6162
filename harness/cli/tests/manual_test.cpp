// The manual page and the completion are generated from the real command tree: every visible
// command and option is in them, the hidden ones are not, and the roff is plain text where it
// must be.
#include "manual.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "command_tree.hpp"

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
  // Hidden commands stay hidden (the header comment names the generator, nothing else does).
  EXPECT_EQ(page.find("man\\-page", page.find(".SH DESCRIPTION")), std::string::npos);
  EXPECT_EQ(page.find(".SS \"rocehil completion"), std::string::npos);
  // Every line starting with '.' or '\'' is a request this generator wrote, not help text.
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || (line[0] != '.' && line[0] != '\'')) continue;
    const bool request = line.rfind(".TH", 0) == 0 || line.rfind(".SH", 0) == 0 ||
                         line.rfind(".SS", 0) == 0 || line == ".nf" || line == ".fi" ||
                         line == ".TP" || line.rfind(".B", 0) == 0 || line.rfind(".I", 0) == 0 ||
                         line.rfind(".\\\"", 0) == 0;
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

}  // namespace
}  // namespace rocehil::cli
