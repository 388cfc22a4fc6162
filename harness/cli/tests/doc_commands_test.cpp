// What the documentation tells an engineer to type must work as written. Every `rocehil` line of
// the README's and docs/'s shell blocks, and every example in a command's --help, is parsed by
// the real command tree (the commands' actions replaced by nothing); every complete suite and
// inventory in a YAML block is loaded by the loaders `run` uses; every relative link leads to a
// file, and every #anchor to a heading of it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "help/command_tree.hpp"
#include "help/manual.hpp"
#include "rocehil/common/error.hpp"
#include "rocehil/inventory/load.hpp"
#include "rocehil/suites/suite.hpp"

namespace rocehil::cli {
namespace {

namespace fs = std::filesystem;

struct Page {
  fs::path path;
  std::vector<std::string> lines;
};

std::vector<Page> pages() {
  std::vector<fs::path> paths{fs::path(ROCEHIL_SOURCE_DIR) / "README.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(ROCEHIL_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md") paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  std::vector<Page> out;
  for (const fs::path& p : paths) {
    std::ifstream in(p);
    Page page{p, {}};
    for (std::string line; std::getline(in, line);) page.lines.push_back(line);
    out.push_back(std::move(page));
  }
  return out;
}

std::string where(const Page& page, std::size_t index) {
  return fs::relative(page.path, ROCEHIL_SOURCE_DIR).string() + ":" + std::to_string(index + 1);
}

// A fenced block: its language and its lines with their indexes in the page.
struct Block {
  std::string language;
  std::vector<std::pair<std::size_t, std::string>> lines;
};

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<Block> blocks(const Page& page) {
  std::vector<Block> out;
  bool inside = false;
  for (std::size_t i = 0; i < page.lines.size(); ++i) {
    const std::string t = trimmed(page.lines[i]);
    if (t.rfind("```", 0) == 0) {
      if (!inside) out.push_back({t.substr(3), {}});
      inside = !inside;
      continue;
    }
    if (inside) out.back().lines.emplace_back(i, page.lines[i]);
  }
  return out;
}

// Shell words, as sh splits a simple command: quotes removed, nothing expanded. Stops at a
// comment, a pipe or a redirection, which are the shell's, not rocehil's.
std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'' || c == '"') {
      const auto end = line.find(c, i + 1);
      word += line.substr(i + 1, end - i - 1);
      in_word = true;
      if (end == std::string::npos) break;
      i = end;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (!in_word && (c == '#' || c == '|' || c == '>' || c == '<' || c == ';' || c == '&')) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// Thrown where a command's action would start: everything before it (options stored and checked,
// requirements, words left over) is the parse.
struct Parsed {};

// The real command tree, stopped after parsing: the root's parse-complete callback runs before
// any command's own (CLI11's run_callback), and it throws. The commands' callbacks stay as they
// are: they own the structures their options write into.
std::unique_ptr<CLI::App> inert_tree() {
  auto app = std::make_unique<CLI::App>();
  static int exit_code = 0;
  add_commands(*app, exit_code);
  app->parse_complete_callback([] { throw Parsed{}; });
  return app;
}

// Empty when `words` (after "rocehil") parse; else CLI11's complaint. A file an option must name
// is the reader's (a .deb, an inventory), so "does not exist" is not a doc's fault.
std::string parse_problem(std::vector<std::string> words) {
  auto app = inert_tree();
  std::reverse(words.begin(), words.end());
  try {
    app->parse(words);
    return "the parse ran a command";  // the sentinel did not stop it: the test is broken
  } catch (const Parsed&) {
    return "";
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    if (what.find("does not exist") != std::string::npos) return "";
    return what.empty() ? "exit " + std::to_string(e.get_exit_code()) : what;
  } catch (const std::exception& e) {
    return e.what();
  }
}

struct Command {
  std::string where;
  std::vector<std::string> words;  // after "rocehil"
};

std::vector<Command> doc_commands() {
  std::vector<Command> out;
  for (const Page& page : pages())
    for (const Block& b : blocks(page)) {
      // Shell blocks are commands; in any other block (a transcript) only what follows "$ " is.
      const bool shell = b.language == "sh" || b.language == "bash";
      if (b.language == "yaml" || b.language == "json") continue;
      std::string joined;
      std::size_t first = 0;
      for (const auto& [index, raw] : b.lines) {
        std::string line = raw;
        if (joined.empty()) first = index;
        if (!line.empty() && line.back() == '\\') {
          joined += line.substr(0, line.size() - 1) + " ";
          continue;
        }
        joined += line;
        std::string t = trimmed(joined);
        joined.clear();
        if (t.rfind("$ ", 0) == 0)
          t = t.substr(2);
        else if (!shell)
          continue;
        const auto words = shell_words(t);
        if (words.empty() || words[0] != "rocehil") continue;
        out.push_back({where(page, first), {words.begin() + 1, words.end()}});
      }
    }
  return out;
}

TEST(DocCommands, EveryRocehilLineOfTheDocsParses) {
  const auto commands = doc_commands();
  // The README's walk alone has six; the pages together many more (a floor that catches an
  // extractor that stopped finding them).
  ASSERT_GT(commands.size(), 40u);
  for (const Command& c : commands) {
    std::string line;
    for (const auto& w : c.words) line += " " + w;
    EXPECT_EQ(parse_problem(c.words), "") << c.where << ": rocehil" << line;
  }
}

TEST(DocCommands, EveryExampleInACommandsHelpParses) {
  const auto app = inert_tree();
  std::size_t examples = 0;
  for (const CommandPath& c : visible_commands(*app)) {
    std::istringstream footer(c.app->get_footer());
    for (std::string line; std::getline(footer, line);) {
      if (line.rfind("  rocehil ", 0) != 0) continue;
      // An example over several lines goes on after a backslash.
      for (std::string next; !line.empty() && line.back() == '\\' && std::getline(footer, next);)
        line = "  " + trimmed(line.substr(0, line.size() - 1)) + " " + trimmed(next);
      // "rocehil suite cases x.yaml        (what it runs)": the words before the remark.
      static const std::regex remark("\\s{2,}.*$");
      auto words = shell_words(std::regex_replace(trimmed(line), remark, ""));
      words.erase(words.begin());
      ++examples;
      EXPECT_EQ(parse_problem(words), "") << c.path << " --help: " << trimmed(line);
    }
  }
  EXPECT_GT(examples, 30u);
}

// A parse that must fail does, so the two tests above can fail.
TEST(DocCommands, AMistypedOptionOrCommandIsCaught) {
  EXPECT_NE(parse_problem({"run", "suites/smoke.yaml", "-i", "x.yaml", "--reprots", "r"}), "");
  EXPECT_NE(parse_problem({"inventroy", "check", "x.yaml"}), "");
  EXPECT_EQ(parse_problem({"run", "suites/smoke.yaml", "-i", "x.yaml", "--only", "incast*"}), "");
  EXPECT_EQ(shell_words("rocehil run 'a b' \"c\" x # note | y"),
            (std::vector<std::string>{"rocehil", "run", "a b", "c", "x"}));
}

// A YAML block that is a whole suite or inventory (it says its schema_version) loads; fragments
// of one (a key's example) are left to the pages' prose.
TEST(DocCommands, EveryCompleteSuiteAndInventoryInTheDocsLoads) {
  const fs::path dir = fs::temp_directory_path() / ("rocehil-doc-yaml-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::size_t suites = 0, inventories = 0;
  for (const Page& page : pages())
    for (const Block& b : blocks(page)) {
      if (b.language != "yaml" || b.lines.empty()) continue;
      std::string text;
      bool versioned = false, has_tests = false, has_hosts = false;
      for (const auto& [index, line] : b.lines) {
        text += line + "\n";
        versioned |= line.rfind("schema_version:", 0) == 0;
        has_tests |= line.rfind("tests:", 0) == 0;
        has_hosts |= line.rfind("hosts:", 0) == 0;
      }
      if (!versioned || has_tests == has_hosts) continue;
      const fs::path file = dir / (has_tests ? "suite.yaml" : "inventory.yaml");
      std::ofstream(file) << text;
      const std::string at = where(page, b.lines.front().first);
      try {
        if (has_tests) {
          ++suites;
          suites::load_suite(file.string());
        } else {
          ++inventories;
          inventory::load_inventory(file.string());
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << at << ": " << e.what();
      }
    }
  fs::remove_all(dir);
  EXPECT_GE(suites, 1u);
  EXPECT_GE(inventories, 1u);
}

// GitHub's heading anchor: lower case, punctuation other than '-' and '_' dropped, blanks to '-'.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (const char c : heading) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_')
      out += static_cast<char>(std::tolower(u));
    else if (c == ' ')
      out += '-';
  }
  return out;
}

std::vector<std::string> anchors(const Page& page) {
  std::vector<std::string> out;
  bool code = false;
  for (const std::string& line : page.lines) {
    if (trimmed(line).rfind("```", 0) == 0) code = !code;
    if (code || line.empty() || line[0] != '#') continue;
    out.push_back(anchor_of(trimmed(line.substr(line.find_first_not_of('#')))));
  }
  return out;
}

TEST(DocCommands, EveryLinkLeadsToAFileAndHeadingThatExist) {
  const auto all = pages();
  static const std::regex link("\\]\\(([^)\\s]+)\\)");
  std::size_t checked = 0;
  for (const Page& page : all) {
    bool code = false;
    for (std::size_t i = 0; i < page.lines.size(); ++i) {
      const std::string& line = page.lines[i];
      if (trimmed(line).rfind("```", 0) == 0) code = !code;
      if (code) continue;
      for (std::sregex_iterator m(line.begin(), line.end(), link), end; m != end; ++m) {
        const std::string target = (*m)[1];
        if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
        const auto hash = target.find('#');
        const std::string file = target.substr(0, hash);
        const fs::path resolved =
            file.empty() ? page.path : (page.path.parent_path() / file).lexically_normal();
        ++checked;
        if (!fs::exists(resolved)) {
          ADD_FAILURE() << where(page, i) << ": " << target << ": no such file";
          continue;
        }
        if (hash == std::string::npos) continue;
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const Page& p) { return p.path == resolved; });
        ASSERT_NE(it, all.end()) << where(page, i) << ": " << target << ": not a page";
        const auto names = anchors(*it);
        EXPECT_NE(std::find(names.begin(), names.end(), target.substr(hash + 1)), names.end())
            << where(page, i) << ": " << target << ": no such heading";
      }
    }
  }
  EXPECT_GT(checked, 50u);
}

}  // namespace
}  // namespace rocehil::cli
