#include "rocehil/reports/run_directory.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocehil/common/error.hpp"

namespace rocehil::reports {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("rocehil-reports-" + std::to_string(getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RunDirectory, RunIdsSortByTimeAndAreSafeFileNames) {
  EXPECT_EQ(make_run_id(1795286701, "smoke"), "20261121T184501Z-smoke");
  EXPECT_EQ(make_run_id(1795286701, "../a b/c"), "20261121T184501Z-suite.._a_b_c");
  EXPECT_EQ(make_run_id(0, ""), "19700101T000000Z-suite");
  EXPECT_EQ(iso_utc(1795286701), "2026-11-21T18:45:01Z");
}

TEST(RunDirectory, ATakenNameGetsASuffixAndFilesAreWrittenWhole) {
  TempDir tmp;
  const auto reports = (tmp.path / "reports").string();
  const RunDirectory first = RunDirectory::create(reports, "r");
  const RunDirectory second = RunDirectory::create(reports, "r");
  EXPECT_EQ(first.run_id(), "r");
  EXPECT_EQ(second.run_id(), "r-2");
  EXPECT_TRUE(fs::is_directory(second.path()));

  first.write("run.json", "{\"a\": 1}\n");
  first.write("run.json", "{\"a\": 2}\n");
  EXPECT_EQ(read(first.file("run.json")), "{\"a\": 2}\n");
  EXPECT_FALSE(fs::exists(first.file("run.json.partial")));
}

TEST(RunDirectory, AnUnwritablePlaceIsAClearError) {
  TempDir tmp;
  fs::create_directories(tmp.path);
  std::ofstream(tmp.path / "file") << "x";
  try {
    RunDirectory::create((tmp.path / "file" / "reports").string(), "r");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot make the reports directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace rocehil::reports
