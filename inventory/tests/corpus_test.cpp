// Every broken file in corpus/ with the exact messages a user gets for it: the wording is part of
// the interface (people search for it, scripts grep it), so a change shows up here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocehil/inventory/load.hpp"

namespace rocehil::inventory {
namespace {

namespace fs = std::filesystem;

std::string read_corpus_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Corpus, EveryBrokenFileGivesItsExactMessages) {
  std::size_t cases = 0;
  for (const auto& entry : fs::directory_iterator(ROCEHIL_INVENTORY_CORPUS)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().filename().string();
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << name << " has no .expected file";
    const LoadResult r = parse_inventory(read_corpus_file(entry.path()), name);
    std::string got;
    for (const auto& d : r.diagnostics) got += to_string(d) + "\n";
    EXPECT_EQ(got, read_corpus_file(expected_path)) << name;
    EXPECT_FALSE(r.inventory.has_value()) << name;
    for (const auto& d : r.diagnostics) {
      EXPECT_GT(d.line, 0) << name;
      EXPECT_EQ(to_string(d).find('\n'), std::string::npos) << name;
    }
    ++cases;
  }
  EXPECT_GE(cases, 20u);
}

}  // namespace
}  // namespace rocehil::inventory
