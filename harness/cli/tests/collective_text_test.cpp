// The collective's table row and notes: what a terminal shows of a case.
#include "traffic/collective_text.hpp"

#include <gtest/gtest.h>

#include "collective_samples.hpp"

namespace rocehil::cli {
namespace {

TEST(CollectiveText, RowAndNotesSayWhatHappened) {
  const run::CollectiveCase c = run::samples::sample_case();
  const std::string row = collective_table_row(c);
  EXPECT_NE(row.find("1048576"), std::string::npos);
  EXPECT_NE(row.find("2000.0"), std::string::npos);
  EXPECT_NE(row.find("5.592"), std::string::npos);
  EXPECT_EQ(row.back(), '\n');
  const std::string notes = collective_notes(c);
  EXPECT_NE(notes.find("data: rank 2 (h3): output CRC-32"), std::string::npos);
  EXPECT_NE(notes.find("straggler: rank 1 (h2) waited 0.500 ms"), std::string::npos);
  EXPECT_NE(notes.find("7 packets retransmitted"), std::string::npos);
  EXPECT_EQ(collective_exit_code({c}), 1);
  run::CollectiveCase clean = c;
  clean.wrong = 0;
  clean.problems.clear();
  EXPECT_EQ(collective_exit_code({clean}), 0);
}

}  // namespace
}  // namespace rocehil::cli
